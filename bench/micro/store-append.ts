/**
 * Micro-bench for appending an audit event: PostgreSQL on loopback (one event at a time: the
 * latency a lone append sees; and bursts of 50 concurrent appends, which the store writes
 * as batches) beside a SQLite file. Run: `npx tsx bench/micro/store-append.ts`.
 *
 * The server is $CLIBROKER_BENCH_POSTGRES (an admin URL; a database is created and dropped
 * on it), else a throwaway cluster from scripts/test-postgres.sh — which runs with fsync
 * off, so its figures are the round trip and the insert, not a disk flush: on a real server
 * add the WAL flush of the commit (or measure there).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openSqliteStore, type Store, type StoreEvent } from '../../src/store/index.js';
import { openPostgresStore } from '../../src/store/postgres.js';
import { quantile } from '../lib/stats.js';
import { table } from './timing.js';

const N = Number(process.env['BENCH_N'] ?? 2_000);
const BURST = 50;
const SCRIPT = fileURLToPath(new URL('../../scripts/test-postgres.sh', import.meta.url));

const event = (i: number): StoreEvent => ({
  type: 'egress.allowed',
  time: new Date(Date.UTC(2030, 0, 1) + i).toISOString(),
  session: 's1',
  labels: { runId: `run-${i % 20}`, extensionId: 'github' },
  method: 'GET',
  host: 'api.github.com',
  path: `/repos/acme/app/issues/${i}`,
  class: 'read',
  decision: 'allow',
  reason: 'read-allowed',
  status: 200,
  outcome: 'sent',
  requestBytes: 0,
  responseBytes: 1234,
  durationMs: 3,
});

async function lone(store: Store): Promise<number[]> {
  for (let i = 0; i < 200; i++) await store.appendEvent(event(i));
  const us: number[] = [];
  for (let i = 0; i < N; i++) {
    const t0 = process.hrtime.bigint();
    await store.appendEvent(event(i));
    us.push(Number(process.hrtime.bigint() - t0) / 1_000);
  }
  return us;
}

/** Microseconds per event over bursts of BURST concurrent appends. */
async function burst(store: Store): Promise<number> {
  const rounds = Math.max(1, Math.floor(N / BURST));
  const t0 = process.hrtime.bigint();
  for (let r = 0; r < rounds; r++)
    await Promise.all(Array.from({ length: BURST }, (_, i) => store.appendEvent(event(r * BURST + i))));
  return Number(process.hrtime.bigint() - t0) / 1_000 / (rounds * BURST);
}

const rows: Record<string, string>[] = [];
const results: Record<string, unknown>[] = [];
function report(backend: string, us: number[], perEventBurst: number): void {
  const p50 = quantile(us, 0.5);
  const p99 = quantile(us, 0.99);
  rows.push({
    backend,
    'lone append p50': `${(p50 / 1000).toFixed(3)} ms`,
    p99: `${(p99 / 1000).toFixed(3)} ms`,
    [`burst of ${BURST}, per event`]: `${(perEventBurst / 1000).toFixed(3)} ms`,
  });
  results.push({
    backend,
    p50Us: Math.round(p50),
    p99Us: Math.round(p99),
    burstPerEventUs: Math.round(perEventBurst),
  });
}

const tmp = mkdtempSync(join(tmpdir(), 'clibroker-bench-store-'));
// Its own directory under the temp root: the script hands it to the postgres user, who cannot enter `tmp`.
const pgDir = mkdtempSync(join(tmpdir(), 'clibroker-bench-pg-'));
let admin = process.env['CLIBROKER_BENCH_POSTGRES'];
const ownCluster = !admin;
try {
  if (!admin) admin = execFileSync(SCRIPT, ['start', pgDir], { encoding: 'utf8' }).trim();
  const db = `clibroker_bench_${process.pid}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`CREATE DATABASE ${db}`);
  const u = new URL(admin);
  u.pathname = `/${db}`;
  const store = await openPostgresStore(u.toString(), { migrate: true });
  report('postgres (loopback)', await lone(store), await burst(store));
  await store.close();
  await c.query(`DROP DATABASE ${db} WITH (FORCE)`);
  await c.end();

  const lite = openSqliteStore(join(tmp, 'bench.db'));
  report('sqlite (file, WAL, synchronous FULL)', await lone(lite), await burst(lite));
  await lite.close();
} finally {
  if (ownCluster) execFileSync(SCRIPT, ['stop', pgDir]);
  rmSync(pgDir, { recursive: true, force: true });
  rmSync(tmp, { recursive: true, force: true });
}
table(rows);
console.log(JSON.stringify({ bench: 'store-append', node: process.version, n: N, results }));
