/**
 * Child processes of the bench and what the kernel says about them. Every proxy runs in
 * its own process so its CPU and memory are read apart from the load generator's
 * ("broker CPU"), and the same /proc reads work for node and for mitmdump.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Resident set size from /proc/<pid>/status (VmRSS), in bytes. */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
  return m ? Number(m[1]) * 1024 : 0;
}

// USER_HZ is 100 on every Linux this runs on (getconf CLK_TCK); /proc/<pid>/stat counts in it.
const TICK_US = 10_000;

/** utime + stime of a process (all its threads) from /proc/<pid>/stat, in µs (10 ms resolution). */
export function procCpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_US;
}

/** Samples VmRSS every `everyMs` until stopped; returns the peak. Reading /proc costs the child nothing. */
export function rssSampler(pid: number, everyMs = 5): { stop(): number } {
  let peak = rssBytes(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssBytes(pid));
    } catch {
      // the process ended: keep the last peak
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      try {
        peak = Math.max(peak, rssBytes(pid));
      } catch {}
      return peak;
    },
  };
}

export interface ReadyMessage {
  type: 'ready';
  port: number;
  /** PEM the client must trust for this path */
  caPem?: string;
  /** Proxy-Authorization header value, when the proxy wants one */
  auth?: string;
}

export interface NodeChild {
  readonly proc: ChildProcess;
  readonly pid: number;
  readonly ready: ReadyMessage;
  /** process.cpuUsage() of the child (user + system, µs), asked over IPC */
  cpuMicros(): Promise<number>;
  /** process.memoryUsage() of the child, asked over IPC */
  memory(): Promise<NodeJS.MemoryUsage>;
  /** asks the child to exit cleanly (so --cpu-prof is written), then kills it after a grace period */
  stop(): Promise<void>;
}

/** Spawns a bundled bench child (node + IPC) and waits for its `ready` message. */
export async function spawnNodeChild(
  script: string,
  args: readonly string[],
  opts: { execArgv?: readonly string[]; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<NodeChild> {
  const proc = spawn(process.execPath, [...(opts.execArgv ?? []), script, ...args], {
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    env: { ...process.env, ...opts.env },
  });
  let stderr = '';
  proc.stderr!.on('data', (c: Buffer) => {
    if (stderr.length < 8192) stderr += c.toString();
  });
  const ready = await new Promise<ReadyMessage>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${script}: no ready message within ${opts.timeoutMs ?? 20_000} ms\n${stderr}`)),
      opts.timeoutMs ?? 20_000,
    );
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited (${code}) before it was ready\n${stderr}`));
    });
    proc.on('message', (m: { type?: string }) => {
      if (m.type === 'ready') {
        clearTimeout(timer);
        resolve(m as ReadyMessage);
      }
    });
  });
  proc.removeAllListeners('exit');
  return {
    proc,
    pid: proc.pid!,
    ready,
    cpuMicros: () => ask<{ micros: number }>(proc, 'cpu').then((m) => m.micros),
    memory: () => ask<NodeJS.MemoryUsage>(proc, 'mem'),
    stop: () => stopChild(proc, () => proc.send({ type: 'stop' })),
  };
}

function ask<T>(proc: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { type?: string }): void => {
      if (m.type !== type) return;
      proc.off('message', on);
      resolve(m as T);
    };
    proc.on('message', on);
    proc.send({ type });
  });
}

/** Asks politely, then SIGKILLs this one child (by its own handle) after `graceMs`. */
export function stopChild(proc: ChildProcess, ask: () => void, graceMs = 5000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    proc.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    try {
      ask();
    } catch {
      proc.kill('SIGTERM');
    }
  });
}
