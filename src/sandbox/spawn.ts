/**
 * One child process in its own process group: output capped and drained, stdin given or
 * EOF, the whole group SIGKILLed at the deadline and again when the child exits (so a
 * straggler it left behind does not outlive the call).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { BrokerError, brokerError } from '../errors.js';
import type { ExitStatus } from './types.js';

/** How long stdout/stderr may stay open after the child exited (a grandchild that escaped the group holds them). */
const DRAIN_GRACE_MS = 500;

export interface SpawnSpec {
  file: string;
  argv: readonly string[];
  env: Record<string, string>;
  cwd: string;
  stdin?: Buffer;
  /** Date.now() value at which the group is killed */
  deadlineAt: number;
  /** bytes of stdout + stderr kept; 0 discards everything (the preamble) */
  capBytes: number;
  /** written to a pipe on fd 3, then closed (the isolated launcher reads the child's env there) */
  fd3?: Buffer;
  /**
   * read from a pipe on fd 4 (with `fd3`): the isolated launcher reports how the CLI ended
   * there, where nothing inside the sandbox but the launcher can write it
   */
  fd4?: true;
  /** aborted: the group is killed now, as at the deadline (the caller cancelled the call) */
  signal?: AbortSignal;
}

export interface SpawnOutcome extends ExitStatus {
  stdout: Buffer;
  stderr: Buffer;
  truncated: boolean;
  timedOut: boolean;
  durationMs: number;
  /** what came on fd 4 (at most 256 bytes), when `fd4` was asked for */
  fd4?: string;
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is already gone.
  }
}

function spawnError(file: string, err: NodeJS.ErrnoException): BrokerError {
  // Arguments within the per-argument limits can still exceed the kernel's total (ARG_MAX).
  if (err.code === 'E2BIG') {
    return brokerError(
      'INVALID_TOOL_INPUT',
      { reason: 'the arguments together are too long for exec' },
      { details: { reason: 'E2BIG' } },
    );
  }
  return new BrokerError('CLI_SPAWN_FAILED', { details: { entrypoint: file, errno: err.code }, cause: err });
}

/**
 * Runs one process to its end (never throws for a non-zero exit).
 * @throws BrokerError CLI_SPAWN_FAILED when the process cannot be started
 */
export function spawnCapped(spec: SpawnSpec): Promise<SpawnOutcome> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(spec.file, spec.argv, {
        env: spec.env,
        cwd: spec.cwd,
        // detached: its own process group (and session: no controlling TTY), killed as a whole.
        detached: true,
        stdio: [
          spec.stdin ? 'pipe' : 'ignore',
          'pipe',
          'pipe',
          ...(spec.fd3 ? (['pipe'] as const) : []),
          ...(spec.fd3 && spec.fd4 ? (['pipe'] as const) : []),
        ],
        shell: false,
        windowsHide: true,
      });
    } catch (err) {
      // node throws some spawn errors (E2BIG, EINVAL) synchronously instead of emitting them.
      return reject(spawnError(spec.file, err as NodeJS.ErrnoException));
    }
    const kept = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
    let budget = spec.capBytes;
    let truncated = false;
    let timedOut = false;
    let exit: ExitStatus | undefined;
    let open = 2;
    let graceTimer: NodeJS.Timeout | undefined;
    const status: Buffer[] = [];
    let statusBytes = 0;

    const collect = (name: 'stdout' | 'stderr', stream: Readable): void => {
      stream.on('data', (chunk: Buffer) => {
        // Keep reading past the cap: a child blocked on a full pipe would never exit.
        if (budget >= chunk.length) {
          kept[name].push(chunk);
          budget -= chunk.length;
        } else {
          if (budget > 0) kept[name].push(chunk.subarray(0, budget));
          budget = 0;
          if (spec.capBytes > 0) truncated = true;
        }
      });
      stream.on('error', () => {});
      stream.on('close', () => {
        open -= 1;
        maybeDone();
      });
    };
    collect('stdout', child.stdout!);
    collect('stderr', child.stderr!);
    if (spec.fd3) {
      const fd3 = child.stdio[3] as Writable;
      fd3.on('error', () => {});
      fd3.end(spec.fd3);
    }
    const fd4 = spec.fd3 && spec.fd4 ? (child.stdio[4] as Readable) : undefined;
    if (fd4) {
      open += 1;
      fd4.on('data', (chunk: Buffer) => {
        if (statusBytes < 256) status.push(chunk.subarray(0, 256 - statusBytes));
        statusBytes += chunk.length;
      });
      fd4.on('error', () => {});
      fd4.on('close', () => {
        open -= 1;
        maybeDone();
      });
    }
    if (child.stdin) {
      child.stdin.on('error', () => {}); // EPIPE when the child does not read it all
      child.stdin.end(spec.stdin);
    }

    const deadline = setTimeout(
      () => {
        if (exit) return; // exited in time; only its pipes are still draining
        timedOut = true;
        killGroup(child.pid);
      },
      Math.max(0, spec.deadlineAt - Date.now()),
    );

    const onAbort = (): void => {
      if (!exit) killGroup(child.pid);
    };
    if (spec.signal?.aborted) onAbort();
    else spec.signal?.addEventListener('abort', onAbort, { once: true });

    let done = false;
    function finish(): void {
      if (done) return;
      done = true;
      spec.signal?.removeEventListener('abort', onAbort);
      clearTimeout(deadline);
      clearTimeout(graceTimer);
      resolve({
        ...exit!,
        stdout: Buffer.concat(kept.stdout),
        stderr: Buffer.concat(kept.stderr),
        truncated,
        timedOut,
        durationMs: Date.now() - started,
        ...(fd4 ? { fd4: Buffer.concat(status).toString('latin1') } : {}),
      });
    }
    function maybeDone(): void {
      if (exit && open === 0) finish();
    }

    child.once('error', (err: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return; // errors after a successful spawn end in 'exit'
      clearTimeout(deadline);
      spec.signal?.removeEventListener('abort', onAbort);
      reject(spawnError(spec.file, err));
    });
    child.once('exit', (exitCode, signal) => {
      exit = { exitCode, signal };
      killGroup(child.pid);
      if (open === 0) return finish();
      graceTimer = setTimeout(() => {
        child.stdout!.destroy();
        child.stderr!.destroy();
        fd4?.destroy();
        finish();
      }, DRAIN_GRACE_MS);
    });
  });
}
