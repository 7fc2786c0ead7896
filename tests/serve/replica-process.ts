/**
 * `clibroker serve --config <file> --port 0` from the built binary as its own process (and
 * process group), the way an operator runs each replica: nothing of the test's environment
 * but PATH and what `env` adds. The first stdout line is the listening line; `kill` signals
 * the whole group; `stop` ends it (SIGTERM, then SIGKILL if it has not exited in 20 s) and is
 * what a teardown calls, whatever state the replica is in.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Json } from './helpers.js';

const PATH = process.env['PATH'] ?? '/usr/bin:/bin';

export interface Replica {
  name: string;
  url: string;
  pid: number;
  /** resolves when the process has exited */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout(): string;
  stderr(): string;
  /** signal the replica's process group */
  kill(signal: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL if still running after 20 s; resolves once it has exited (idempotent) */
  stop(): Promise<void>;
  /** the replica and its descendants as last seen (by `kill` or `stop`) */
  seen(): Proc[];
  /** what `stop` found still running of `seen()` after the replica exited (and then killed) */
  leftovers(): Proc[];
  /** a JSON request; `token` undefined sends no Authorization */
  call(
    method: string,
    path: string,
    token?: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; json: Json; headers: Headers }>;
}

/** What a binary run that was expected to refuse printed: it exited, or it listened (a failure). */
export type Started =
  | { listening: true; replica: Replica }
  | { listening: false; code: number | null; stdout: string; stderr: string };

/** Spawn the binary's `serve` and wait for its listening line or its exit, whichever comes first. */
export async function spawnServe(
  bin: string,
  name: string,
  config: string,
  env: Record<string, string> = {},
): Promise<Started> {
  const child: ChildProcess = spawn(process.execPath, [bin, 'serve', '--config', config, '--port', '0'], {
    env: { PATH, ...env },
    stdio: 'pipe',
    detached: true,
  });
  let out = '';
  let err = '';
  child.stderr?.on('data', (c) => {
    err += c;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const first = await new Promise<{ url: string } | { code: number | null }>((resolve) => {
    child.stdout?.on('data', (c) => {
      out += c;
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        try {
          const line = JSON.parse(out.slice(0, nl)) as { event?: string; url?: string };
          if (line.event === 'serve.listening' && typeof line.url === 'string') resolve({ url: line.url });
        } catch {
          // not the listening line: the exit says what happened
        }
      }
    });
    void exited.then(({ code }) => resolve({ code }));
  });
  if (!('url' in first)) return { listening: false, code: first.code, stdout: out, stderr: err };
  const pid = child.pid!;
  let dead = false;
  void exited.then(() => {
    dead = true;
  });
  // what the replica started, remembered before it is signalled: once it is gone they are orphans
  const seen = new Map<number, Proc>();
  const remember = (): void => {
    for (const p of descendants(pid)) seen.set(p.pid, p);
  };
  const kill = (signal: NodeJS.Signals): void => {
    if (dead) return;
    remember();
    try {
      process.kill(-pid, signal);
    } catch {
      // the group is gone already
    }
  };
  let stopping: Promise<void> | undefined;
  let left: Proc[] = [];
  const url = first.url;
  const replica: Replica = {
    name,
    url,
    pid,
    exited,
    stdout: () => out,
    stderr: () => err,
    kill,
    stop() {
      stopping ??= (async () => {
        if (dead) return;
        kill('SIGTERM');
        const timer = setTimeout(() => kill('SIGKILL'), 20_000);
        await exited;
        clearTimeout(timer);
        // whatever it started and left running (a run in a group of its own) goes with it
        // (the group's signal reaches them unless they made groups of their own)
        await new Promise((r) => setTimeout(r, 200));
        left = stillRunning([...seen.values()]);
        for (const p of left)
          try {
            process.kill(p.pid, 'SIGKILL');
          } catch {
            // gone meanwhile
          }
      })();
      return stopping;
    },
    seen: () => [...seen.values()],
    leftovers: () => left,
    async call(method, path, token, body, headers = {}) {
      const r = await fetch(`${url}${path}`, {
        method,
        headers: {
          ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      });
      const text = await r.text();
      let json: Json;
      try {
        json = JSON.parse(text);
      } catch {
        json = { text };
      }
      return { status: r.status, json, headers: r.headers };
    },
  };
  return { listening: true, replica };
}

/** Start a replica that must listen; its output is in the error when it does not. */
export async function startReplica(
  bin: string,
  name: string,
  config: string,
  env: Record<string, string> = {},
): Promise<Replica> {
  const s = await spawnServe(bin, name, config, env);
  if (!s.listening)
    throw new Error(`replica ${name} exited ${s.code} before listening:\n${s.stdout}\n${s.stderr}`);
  return s.replica;
}

/** Poll `fn` every `everyMs` until it returns something other than undefined, at most `tries` times. */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  tries = 300,
  everyMs = 200,
): Promise<T> {
  let last: unknown;
  for (let i = 0; i < tries; i++) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`gave up waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

/** A process as /proc shows it; `start` (clock ticks after boot) tells a reused pid apart. */
export interface Proc {
  pid: number;
  ppid: number;
  start: string;
  cmd: string;
}

function procs(): Proc[] {
  const out: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const cmd = stat.slice(stat.indexOf('(') + 1, close);
      // after "pid (comm) ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
      // utime stime cutime cstime priority nice threads itrealvalue starttime
      const f = stat.slice(close + 2).split(' ');
      if (f[0] !== 'Z') out.push({ pid: Number(name), ppid: Number(f[1]), start: f[19]!, cmd });
    } catch {
      // exited while we looked
    }
  }
  return out;
}

/** `pid` and every process below it. */
export function descendants(pid: number): Proc[] {
  const all = procs();
  const found = all.filter((p) => p.pid === pid);
  for (let i = 0; i < found.length; i++) for (const p of all) if (p.ppid === found[i]!.pid) found.push(p);
  return found;
}

/** Those of `list` still running (the same pid started at the same time, not a zombie's reuse). */
export function stillRunning(list: readonly Proc[]): Proc[] {
  const now = new Map(procs().map((p) => [p.pid, p]));
  return list.filter((p) => now.get(p.pid)?.start === p.start);
}
