/**
 * The daemon as an operator deploys it, for end-to-end tests: the built binary spawned as
 * `clibroker daemon --config`, waited for until it listens, and `clibroker run` as a
 * separate process that knows only what the test puts in its environment.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { curlCli, ghCli, githubExtension } from '../../src/manifest/examples.js';
import type { ExtensionManifest } from '../../src/manifest/types.js';

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read envelopes freely
  env: any;
}

const PATH = process.env['PATH'] ?? '/usr/bin:/bin';

/**
 * Run the built binary as a separate process with exactly `env` (and PATH); `as` is an argv
 * prefix that runs it as another user (tests/helpers/os-users.ts `asUser`).
 */
export function runBinary(
  bin: string,
  args: string[],
  env: Record<string, string>,
  input = '',
  as: readonly string[] = [],
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const argv = [...as, process.execPath, bin, ...args];
    const child = spawn(argv[0]!, argv.slice(1), { env: { PATH, ...env }, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(stdout);
      } catch {
        parsed = undefined;
      }
      resolve({ code, stdout, stderr, env: parsed });
    });
    child.stdin.end(input);
  });
}

/** Spawn the daemon and wait for its listening line. */
export function startDaemon(
  bin: string,
  config: string,
): Promise<{
  child: ChildProcessWithoutNullStreams;
  listening: Record<string, unknown>;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}> {
  return new Promise((resolve, reject) => {
    // nothing of the test's environment: the configuration's secrets are in files
    const child = spawn(process.execPath, [bin, 'daemon', '--config', config], {
      env: { PATH },
      stdio: 'pipe',
    });
    let out = '';
    let err = '';
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.stderr.on('data', (c) => {
      err += c;
    });
    child.stdout.on('data', (c) => {
      out += c;
      const line = out.split('\n')[0]!;
      if (out.includes('\n') && line.includes('daemon.listening'))
        resolve({ child, listening: JSON.parse(line), out: () => out, err: () => err, exited });
    });
    void exited.then((code) =>
      reject(new Error(`the daemon exited (${code}) before listening: ${out}${err}`)),
    );
    setTimeout(
      () => reject(new Error(`the daemon did not listen within 60 s: ${out}${err}`)),
      60_000,
    ).unref();
  });
}

/** The GitHub extension the end-to-end tests install: gh and curl, each on its pinned image. */
export const github: ExtensionManifest = githubExtension([
  ghCli({ image: 'gh', entrypoint: '/usr/bin/gh' }),
  curlCli({ image: 'curl', entrypoint: '/usr/bin/curl' }),
]);
