/**
 * `npm run bench:replicas`: what a second `clibroker serve` replica over one PostgreSQL store
 * buys, as ratios measured in one run.
 *
 *   sqlite ×1    one `clibroker serve` process on the seed deployment's SQLite store
 *   postgres ×1  one process on a PostgreSQL store (the same configuration, `store.postgres`)
 *   postgres ×2  two processes on that same PostgreSQL store; the load balancer is this
 *                bench: a client-side round robin, call i goes to replica i mod 2
 *
 * Every configuration gets the same load: C concurrent clients making N read calls in all,
 * `POST /v1/tools/execute` of the seed's curl tool (`curl -sS https://api.atlassian.com/me`,
 * the credential injected by the broker, answered by the mock vendor; BENCH_TOOL=gh runs
 * `gh api user` instead), each call a governed run with its own sandbox. The configurations
 * are interleaved over the repetitions (the order rotating), so the machine's drift falls on
 * all of them alike; figures are medians over the repetitions, ratios are against sqlite ×1
 * of the same repetition.
 *
 * CPU per call, from /proc before and after each measurement: the serve processes' own
 * (utime + stime), the processes they ran and reaped (cutime + cstime: the sandbox and the
 * CLI), PostgreSQL's (the postmaster and its backends, when the server is a local process)
 * and this load generator's. "cores busy" is all of it over the wall time: near the core
 * count, the machine is the limit; "thread busy" is one serve process's own CPU over the wall
 * time: near 1, that replica's single node thread is. "machine busy" is every core's use from
 * /proc/stat, other work on the machine included: near the core count while "cores busy" is
 * well below it, the cores went to something else and the figures are not this code's.
 *
 *   npm run bench:replicas                          # builds the CLI bundle first
 *   BENCH_N=400 BENCH_C=16 BENCH_REPS=5 npx tsx bench/replicas.ts
 *
 * PostgreSQL: $CLIBROKER_TEST_POSTGRES (an admin URL; a fresh database is made on it and
 * dropped), else a throwaway cluster (initdb) started and removed by the bench. The database
 * is migrated with `clibroker store migrate --config`, as an operator does before the
 * replicas start. Markdown table on stdout; JSON lines (one per measurement, one per
 * configuration) on stderr.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Pool } from 'undici';
import type { OperatorConfig } from '../src/config/types.js';
import { ENV_URL, type PgServer, pgUnavailable, startCluster } from '../tests/helpers/postgres.js';
import { type SeedDeployment, seedDeployment } from '../tests/helpers/seed.js';
import { TOKENS } from '../tests/serve/helpers.js';
import { procCpuMicros, stopChild } from './lib/proc.js';
import { median, quantile } from './lib/stats.js';

const BIN = fileURLToPath(new URL('../bin/clibroker.js', import.meta.url));
const BUNDLE = fileURLToPath(new URL('../dist/commands/main.js', import.meta.url));
const N = Number(process.env['BENCH_N'] ?? 200);
const C = Number(process.env['BENCH_C'] ?? 8);
const REPS = Number(process.env['BENCH_REPS'] ?? 3);
const TOOL = process.env['BENCH_TOOL'] === 'gh' ? 'gh' : 'curl';
const CALL =
  TOOL === 'gh'
    ? { toolId: 'gh_cli', input: { args: ['api', 'user'] } }
    : { toolId: 'curl_cli', input: { args: ['-sS', 'https://api.atlassian.com/me'] } };
const STORE_ENV = 'CLIBROKER_STORE_URL';
const PATH = process.env['PATH'] ?? '/usr/bin:/bin';
const CORES = availableParallelism();

const log = (msg: string): void => void process.stderr.write(`${msg}\n`);
const jsonLine = (o: unknown): void => void process.stderr.write(`${JSON.stringify(o)}\n`);
const round = (x: number, d = 1): number => Math.round(x * 10 ** d) / 10 ** d;

// ---------------------------------------------------------------- processes and their CPU

/** cutime + cstime of a process (its reaped children's, recursively), in µs. */
function childrenCpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) * 10_000;
}

function ppidOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

const pids = (): number[] =>
  readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number);

/** The postmaster listening on `port` on this machine, found by its command line, or undefined. */
function postmasterOf(port: number): number | undefined {
  for (const pid of pids()) {
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
    } catch {
      continue;
    }
    if (!argv[0]?.endsWith('postgres')) continue;
    const p = argv.indexOf('-p');
    const joined = argv.join(' ');
    if ((p >= 0 && argv[p + 1] === String(port)) || joined.includes(`-p ${port} `)) return pid;
  }
  return undefined;
}

/** All CPU PostgreSQL has spent: the postmaster, its live backends and the ones it reaped (µs). */
function postgresCpuMicros(pm: number): number {
  let sum = procCpuMicros(pm) + childrenCpuMicros(pm);
  for (const pid of pids()) {
    if (ppidOf(pid) !== pm) continue;
    try {
      sum += procCpuMicros(pid);
    } catch {
      // it exited between the listing and the read: its time is in the postmaster's cutime
    }
  }
  return sum;
}

/** Jiffies of the whole machine from /proc/stat: busy (all but idle and iowait) and total. */
function machineJiffies(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'latin1').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3]! - f[4]!, total };
}

interface Replica {
  proc: ChildProcess;
  pid: number;
  url: string;
  pool: Pool;
  stderr(): string;
}

/** `clibroker serve --config <file> --port 0` from the built binary, only PATH (and the store's URL) in its environment. */
async function startServe(file: string, env: Record<string, string>): Promise<Replica> {
  const proc = spawn(process.execPath, [BIN, 'serve', '--config', file, '--port', '0'], {
    env: { PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  // both pipes are drained for the process's whole life: a full pipe would stall it
  proc.stderr!.on('data', (c: Buffer) => {
    err = (err + c.toString()).slice(-8192);
  });
  const listening = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`serve: not listening after 60 s\n${out}${err}`)),
      60_000,
    );
    proc.stdout!.on('data', (c: Buffer) => {
      if (out.includes('\n')) return;
      out += c.toString();
      if (!out.includes('\n')) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out.split('\n')[0]!));
      } catch {
        reject(new Error(`serve printed ${out.slice(0, 400)}\n${err}`));
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited ${code} before listening\n${out}${err}`));
    });
  }).catch((e: unknown) => {
    proc.kill('SIGKILL'); // this one child, by its own handle: it never served
    throw e;
  });
  proc.removeAllListeners('exit');
  if (listening['event'] !== 'serve.listening') {
    proc.kill('SIGKILL');
    throw new Error(`serve: ${JSON.stringify(listening)}`);
  }
  const url = String(listening['url']);
  return {
    proc,
    pid: proc.pid!,
    url,
    pool: new Pool(url, { connections: C, keepAliveTimeout: 120_000, headersTimeout: 300_000 }),
    stderr: () => err,
  };
}

async function stopServe(r: Replica): Promise<void> {
  await r.pool.close().catch(() => {});
  await stopChild(r.proc, () => r.proc.kill('SIGTERM'), 15_000);
}

// ---------------------------------------------------------------- the load

/** One read call; its latency in ms. Throws unless the run completed with exit code 0. */
async function call(r: Replica): Promise<number> {
  const t0 = performance.now();
  const res = await r.pool.request({
    path: '/v1/tools/execute',
    method: 'POST',
    headers: { authorization: `Bearer ${TOKENS.executor}`, 'content-type': 'application/json' },
    body: JSON.stringify(CALL),
  });
  const text = await res.body.text();
  const ms = performance.now() - t0;
  let body: { ok?: boolean; result?: { exitCode?: number } } = {};
  try {
    body = JSON.parse(text);
  } catch {}
  if (res.statusCode !== 200 || body.ok !== true || body.result?.exitCode !== 0)
    throw new Error(`${res.statusCode} ${text.slice(0, 300)}`);
  return ms;
}

/** `n` calls from `c` concurrent clients, call i to replica i mod replicas (the round robin). */
async function drive(
  replicas: readonly Replica[],
  n: number,
  c: number,
): Promise<{ latencies: number[]; wallMs: number; errors: number; firstError?: string }> {
  let next = 0;
  let errors = 0;
  let firstError: string | undefined;
  const latencies: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(c, n) }, async () => {
      for (let i = next++; i < n; i = next++) {
        try {
          latencies.push(await call(replicas[i % replicas.length]!));
        } catch (e) {
          errors++;
          firstError ??= String((e as Error).message ?? e);
        }
      }
    }),
  );
  return { latencies, wallMs: performance.now() - t0, errors, ...(firstError ? { firstError } : {}) };
}

// ---------------------------------------------------------------- the configurations

interface Configuration {
  id: string;
  label: string;
  replicas: Replica[];
  postgres: boolean;
}

interface Measurement {
  config: string;
  rep: number;
  order: number;
  calls: number;
  errors: number;
  callsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  serveCpuMsPerCall: number;
  childrenCpuMsPerCall: number;
  postgresCpuMsPerCall?: number;
  clientCpuMsPerCall: number;
  coresBusy: number;
  /** the busiest serve process's own CPU over the wall time */
  threadBusy: number;
  /** cores in use on the whole machine (this bench and everything else running) */
  machineBusy: number;
}

async function measure(
  cfg: Configuration,
  rep: number,
  order: number,
  pm: number | undefined,
): Promise<Measurement> {
  const own0 = cfg.replicas.map((r) => procCpuMicros(r.pid));
  const kids0 = cfg.replicas.map((r) => childrenCpuMicros(r.pid));
  const pg0 = pm !== undefined ? postgresCpuMicros(pm) : undefined;
  const client0 = process.cpuUsage();
  const machine0 = machineJiffies();
  const run = await drive(cfg.replicas, N, C);
  const client = process.cpuUsage(client0);
  const machine1 = machineJiffies();
  const own = cfg.replicas.map((r, i) => procCpuMicros(r.pid) - own0[i]!);
  const kids = cfg.replicas.reduce((s, r, i) => s + childrenCpuMicros(r.pid) - kids0[i]!, 0);
  const pgCpu = pm !== undefined && pg0 !== undefined ? postgresCpuMicros(pm) - pg0 : undefined;
  if (run.errors)
    log(`${cfg.id} rep ${rep}: ${run.errors} of ${N} calls failed, the first: ${run.firstError}`);
  const done = Math.max(1, run.latencies.length);
  const ownSum = own.reduce((a, b) => a + b, 0);
  const clientMicros = client.user + client.system;
  const allMicros = ownSum + kids + (cfg.postgres ? (pgCpu ?? 0) : 0) + clientMicros;
  const perCall = (micros: number): number => round(micros / 1000 / done, 2);
  return {
    config: cfg.id,
    rep,
    order,
    calls: run.latencies.length,
    errors: run.errors,
    callsPerSec: round(run.latencies.length / (run.wallMs / 1000), 2),
    p50Ms: round(quantile(run.latencies, 0.5)),
    p99Ms: round(quantile(run.latencies, 0.99)),
    serveCpuMsPerCall: perCall(ownSum),
    childrenCpuMsPerCall: perCall(kids),
    ...(cfg.postgres && pgCpu !== undefined ? { postgresCpuMsPerCall: perCall(pgCpu) } : {}),
    clientCpuMsPerCall: perCall(clientMicros),
    coresBusy: round(allMicros / 1000 / run.wallMs, 2),
    threadBusy: round(Math.max(...own) / 1000 / run.wallMs, 2),
    machineBusy: round(((machine1.busy - machine0.busy) / (machine1.total - machine0.total || 1)) * CORES, 2),
  };
}

function writeConfig(d: SeedDeployment, name: string, config: OperatorConfig): string {
  const file = join(d.dir.dir, name);
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  return file;
}

function runCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BIN, ...args], {
      env: { PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    p.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    p.stderr.on('data', (c: Buffer) => {
      out += c.toString();
    });
    p.once('error', reject);
    p.once('close', (code) => resolve({ code, out }));
  });
}

async function main(): Promise<void> {
  if (!existsSync(BUNDLE))
    throw new Error(`${BUNDLE} is missing: run npm run build:js (npm run bench:replicas does)`);
  if (!(N > 0 && C > 0 && REPS > 0)) throw new Error('BENCH_N, BENCH_C and BENCH_REPS must be positive');
  const adminEnv = process.env[ENV_URL];
  if (!adminEnv && pgUnavailable()) throw new Error(`no PostgreSQL: ${pgUnavailable()}`);
  const load0 = loadavg();
  log(
    `${CORES} cores, load ${load0.map((l) => l.toFixed(2)).join(' ')}; N=${N} C=${C} reps=${REPS} tool=${TOOL}`,
  );

  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanup = async (): Promise<void> => {
    for (const f of cleanups.splice(0).reverse()) {
      try {
        await f();
      } catch (e) {
        log(`cleanup: ${(e as Error).message}`);
      }
    }
  };
  const onSignal = (): void => {
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const measurements: Measurement[] = [];
  let cfgs: Configuration[] = [];
  try {
    // PostgreSQL: a fresh database on $CLIBROKER_TEST_POSTGRES, else on a throwaway cluster
    let server: PgServer;
    if (adminEnv) {
      server = {
        adminUrl: adminEnv,
        urlOf: (db) => {
          const u = new URL(adminEnv);
          u.pathname = `/${db}`;
          return u.toString();
        },
        destroy() {},
      };
    } else {
      const t0 = performance.now();
      server = await startCluster();
      cleanups.push(() => server.destroy());
      log(`throwaway PostgreSQL cluster up in ${Math.round(performance.now() - t0)} ms`);
    }
    const db = `clibroker_bench_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: server.adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${db}`);
    await admin.end();
    cleanups.push(async () => {
      const c = new pg.Client({ connectionString: server.adminUrl });
      try {
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      } finally {
        await c.end().catch(() => {});
      }
    });
    const storeUrl = server.urlOf(db);
    const pgPort = Number(new URL(storeUrl).port || 5432);
    const pm = postmasterOf(pgPort);
    if (pm === undefined) log(`no PostgreSQL process found for port ${pgPort} here: its CPU is not counted`);

    // one seed deployment (configuration, mock vendor, secrets) under every configuration
    const d = await seedDeployment((c, dir) => ({
      ...c,
      serve: { port: 0, executorToken: dir.secret('executor', TOKENS.executor) },
    }));
    cleanups.push(() => d.close());
    const sqliteFile = d.file;
    const pgFile = writeConfig(d, 'config-postgres.json', {
      ...d.config,
      store: { postgres: { env: STORE_ENV } },
    });
    const pgEnv = { [STORE_ENV]: storeUrl };
    const migrated = await runCli(['store', 'migrate', '--config', pgFile], pgEnv);
    if (migrated.code !== 0) throw new Error(`store migrate failed (${migrated.code}): ${migrated.out}`);
    log(
      `store migrate: ${migrated.out
        .trim()
        .split('\n')[0]!
        .replace(/:\/\/[^@]*@/, '://…@')}`,
    );

    const start = async (file: string, env: Record<string, string>): Promise<Replica> => {
      const r = await startServe(file, env);
      cleanups.push(() => stopServe(r));
      return r;
    };
    cfgs = [
      {
        id: 'sqlite-1',
        label: 'SQLite, 1 process',
        replicas: [await start(sqliteFile, {})],
        postgres: false,
      },
      {
        id: 'postgres-1',
        label: 'PostgreSQL, 1 process',
        replicas: [await start(pgFile, pgEnv)],
        postgres: true,
      },
      {
        id: 'postgres-2',
        label: 'PostgreSQL, 2 processes (round robin)',
        replicas: [await start(pgFile, pgEnv), await start(pgFile, pgEnv)],
        postgres: true,
      },
    ];
    // warm-up: C calls on every process (JIT, the store's first statements, the page cache)
    for (const cfg of cfgs)
      for (const r of cfg.replicas) {
        const w = await drive([r], C, C);
        if (w.errors) throw new Error(`${cfg.id}: warm-up call failed: ${w.firstError}\n${r.stderr()}`);
      }

    for (let rep = 0; rep < REPS; rep++) {
      for (let k = 0; k < cfgs.length; k++) {
        const cfg = cfgs[(rep + k) % cfgs.length]!;
        const m = await measure(cfg, rep, k, pm);
        measurements.push(m);
        jsonLine({ bench: 'replicas', ...m, load1: round(loadavg()[0]!, 2) });
      }
    }
  } finally {
    await cleanup();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  const load1 = loadavg();

  // ---------------------------------------------------------------- the table
  const of = (id: string): Measurement[] => measurements.filter((m) => m.config === id);
  const base = new Map(of('sqlite-1').map((m) => [m.rep, m]));
  const med = (xs: number[]): number | undefined => (xs.length ? median(xs) : undefined);
  const ratio = (id: string, k: 'callsPerSec' | 'p50Ms' | 'p99Ms'): number | undefined =>
    med(of(id).flatMap((m) => (base.get(m.rep) ? [m[k] / base.get(m.rep)![k]] : [])));
  const f = (v: number | undefined, d = 1): string => (v === undefined ? '—' : v.toFixed(d));
  const x = (v: number | undefined): string => (v === undefined ? '—' : `×${v.toFixed(2)}`);
  const header = [
    'configuration',
    'calls/s',
    'vs (1)',
    'p50 ms',
    'vs (1)',
    'p99 ms',
    'vs (1)',
    'serve CPU ms/call',
    'sandbox+CLI CPU ms/call',
    'PostgreSQL CPU ms/call',
    'cores busy',
    'thread busy',
    'machine busy',
    'failed',
  ];
  const rows = cfgs.map((cfg, i) => {
    const ms = of(cfg.id);
    const m = (k: keyof Measurement): number | undefined =>
      med(ms.flatMap((r) => (typeof r[k] === 'number' ? [r[k] as number] : [])));
    const summary = {
      bench: 'replicas',
      summary: cfg.id,
      processes: cfg.replicas.length,
      reps: ms.length,
      callsPerSec: m('callsPerSec'),
      callsPerSecVsSqlite1: ratio(cfg.id, 'callsPerSec'),
      p50Ms: m('p50Ms'),
      p50VsSqlite1: ratio(cfg.id, 'p50Ms'),
      p99Ms: m('p99Ms'),
      p99VsSqlite1: ratio(cfg.id, 'p99Ms'),
      serveCpuMsPerCall: m('serveCpuMsPerCall'),
      childrenCpuMsPerCall: m('childrenCpuMsPerCall'),
      postgresCpuMsPerCall: m('postgresCpuMsPerCall'),
      clientCpuMsPerCall: m('clientCpuMsPerCall'),
      coresBusy: m('coresBusy'),
      threadBusy: m('threadBusy'),
      machineBusy: m('machineBusy'),
      failed: ms.reduce((s, r) => s + r.errors, 0),
    };
    jsonLine(summary);
    return [
      `(${i + 1}) ${cfg.label}`,
      f(summary.callsPerSec),
      i === 0 ? '—' : x(summary.callsPerSecVsSqlite1),
      f(summary.p50Ms),
      i === 0 ? '—' : x(summary.p50VsSqlite1),
      f(summary.p99Ms),
      i === 0 ? '—' : x(summary.p99VsSqlite1),
      f(summary.serveCpuMsPerCall, 2),
      f(summary.childrenCpuMsPerCall, 2),
      cfg.postgres ? f(summary.postgresCpuMsPerCall, 2) : '—',
      f(summary.coresBusy, 2),
      f(summary.threadBusy, 2),
      f(summary.machineBusy, 2),
      String(summary.failed),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  const out = [
    `Replicas: ${N} calls × ${REPS} reps per configuration, ${C} concurrent clients, \`${CALL.toolId} ${CALL.input.args.join(' ')}\`; ` +
      `${CORES} cores shared by the serve processes, their sandboxes and CLIs, PostgreSQL and the load generator; ` +
      `load ${load0[0]!.toFixed(2)} → ${load1[0]!.toFixed(2)}. Medians over reps; "vs (1)" is the median of each rep's ratio to (1).`,
    '',
    line(header),
    `|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`,
    ...rows.map(line),
    '',
    'The load balancer of (3) is the bench itself: call i goes to replica i mod 2. ' +
      'cores busy = all CPU counted (serve, sandbox+CLI, PostgreSQL, the load generator) ÷ wall time; ' +
      `near ${CORES} the machine is the limit. thread busy = the busiest serve process's own CPU ÷ wall time; near 1 its node thread is. ` +
      `machine busy = cores in use on the whole machine, other work included (/proc/stat): near ${CORES} with cores busy well below, other work is taking the cores.`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
  process.exitCode = measurements.some((m) => m.errors > 0) ? 1 : 0;
}

await main();
