/**
 * A long-running process a test starts and reads as it prints (`clibroker serve`, a demo):
 * stdout and stderr collected, `until(pattern)` resolving with all of stdout once the pattern
 * shows (rejecting with everything printed if the process exits first), `exited` its exit
 * code, and a SIGKILL at teardown should the test leave it running.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';

export interface ServerProcess {
  child: ChildProcessWithoutNullStreams;
  /** stdout so far */
  out(): string;
  /** stderr so far */
  err(): string;
  /** the exit code (null when killed by a signal) */
  exited: Promise<number | null>;
  /** all of stdout once `pattern` matches it */
  until(pattern: RegExp): Promise<string>;
}

/** Starts `command` with pipes for its three streams. */
export function startProcess(
  t: { teardown(fn: () => unknown): void },
  command: string,
  args: readonly string[],
  opts: { env: NodeJS.ProcessEnv; cwd?: string },
): ServerProcess {
  const child = spawn(command, args, { ...opts, stdio: 'pipe' });
  let out = '';
  let err = '';
  const waiting: (() => void)[] = [];
  child.stdout.on('data', (c) => {
    out += c;
    for (const w of waiting) w();
  });
  child.stderr.on('data', (c) => {
    err += c;
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    child,
    out: () => out,
    err: () => err,
    exited,
    until: (pattern) =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          if (pattern.test(out)) resolve(out);
        };
        waiting.push(check);
        check();
        void exited.then((code) => reject(new Error(`exited ${code} before ${pattern}: ${out}${err}`)));
      }),
  };
}
