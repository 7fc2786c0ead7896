/**
 * A real PostgreSQL server for the tests. When $CLIBROKER_TEST_POSTGRES names one (an admin
 * URL; .ci/run starts a cluster and exports it) it is used; otherwise the first test that
 * needs one starts a throwaway cluster for its test file: initdb in a temp directory, the
 * server on a free loopback port (and a unix socket in that directory), password auth,
 * stopped and removed when the file ends.
 *
 * initdb refuses to run as root, so as root the cluster runs as the `postgres` user the
 * Debian package creates (else `nobody`), through runuser.
 *
 * No server and no binaries: under CI=1 that is a failure, never a skip; elsewhere the
 * PostgreSQL half of a suite is skipped with the reason printed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export const ENV_URL = 'CLIBROKER_TEST_POSTGRES';

/** A running server: its admin URL and, for a cluster we started, stop/start controls. */
export interface PgServer {
  /** postgres://user:password@127.0.0.1:port/postgres */
  adminUrl: string;
  /** the URL of database `db` on this server */
  urlOf(db: string): string;
  /** a cluster we started can be stopped and started again (restart tests) */
  stop?(mode?: 'fast' | 'immediate'): void;
  start?(): void;
  /** stop and remove it */
  destroy(): void;
}

/** Where initdb and pg_ctl are, or undefined. */
export function pgBinDir(): string | undefined {
  if (process.env['PG_BIN'] && existsSync(join(process.env['PG_BIN'], 'initdb')))
    return process.env['PG_BIN'];
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  const found = which.stdout.trim();
  return which.status === 0 && found ? join(found, '..') : undefined;
}

/** Why PostgreSQL tests cannot run here, or undefined when they can. */
export function pgUnavailable(): string | undefined {
  if (process.env[ENV_URL]) return undefined;
  if (!pgBinDir())
    return `no PostgreSQL server binaries (initdb) and no $${ENV_URL}; run scripts/install-system-deps.sh`;
  return undefined;
}

/**
 * The tap `skip` option for a PostgreSQL test: false when it can run. Under CI=1 a missing
 * server throws (the file fails) instead of skipping.
 */
export function pgSkip(): false | string {
  const why = pgUnavailable();
  if (!why) return false;
  if (process.env['CI']) throw new Error(`PostgreSQL tests cannot run in CI: ${why}`);
  console.error(`# SKIPPING the PostgreSQL tests: ${why}`);
  return `PostgreSQL unavailable: ${why}`;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function runAs(): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  return spawnSync('id', ['-u', 'postgres']).status === 0 ? 'postgres' : 'nobody';
}

function idOf(user: string, flag: '-u' | '-g'): number {
  return Number(execFileSync('id', [flag, user], { encoding: 'utf8' }).trim());
}

/** Start a throwaway cluster (initdb + pg_ctl). Synchronous: the tools are child processes. */
export async function startCluster(): Promise<PgServer> {
  const bin = pgBinDir();
  if (!bin) throw new Error(pgUnavailable() ?? 'no PostgreSQL binaries');
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'clibroker-pg-'));
  chmodSync(dir, 0o755);
  if (user) chownSync(dir, idOf(user, '-u'), idOf(user, '-g'));
  const data = join(dir, 'data');
  const password = randomBytes(12).toString('hex');
  const pwfile = join(dir, 'pw');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (user) chownSync(pwfile, idOf(user, '-u'), idOf(user, '-g'));
  const port = await freePort();
  const as = (cmd: string, args: string[]): void => {
    const [file, argv] = user
      ? ['runuser', ['-u', user, '--', join(bin, cmd), ...args]]
      : [join(bin, cmd), args];
    const r = spawnSync(file, argv, { encoding: 'utf8', cwd: dir });
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout}`);
  };
  as('initdb', [
    '-D',
    data,
    '-U',
    'clibroker',
    `--pwfile=${pwfile}`,
    '--auth=scram-sha-256',
    '-E',
    'UTF8',
    '--locale=C',
    '--no-sync',
  ]);
  rmSync(pwfile);
  // fsync off: a test cluster need not survive an OS crash; a server crash it survives anyway.
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=300`;
  const start = (): void =>
    as('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-w', '-t', '60', '-o', opts, 'start']);
  const stop = (mode: 'fast' | 'immediate' = 'fast'): void =>
    as('pg_ctl', ['-D', data, '-w', '-m', mode, 'stop']);
  start();
  const urlOf = (db: string): string => `postgres://clibroker:${password}@127.0.0.1:${port}/${db}`;
  let destroyed = false;
  return {
    adminUrl: urlOf('postgres'),
    urlOf,
    stop,
    start,
    destroy() {
      if (destroyed) return;
      destroyed = true;
      try {
        stop('immediate');
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let shared: Promise<PgServer> | undefined;

/** The server for this test file: $CLIBROKER_TEST_POSTGRES, else one cluster started once per file. */
export function testServer(): Promise<PgServer> {
  if (!shared) {
    const url = process.env[ENV_URL];
    if (url) {
      shared = Promise.resolve({
        adminUrl: url,
        urlOf: (db) => {
          const u = new URL(url);
          u.pathname = `/${db}`;
          return u.toString();
        },
        destroy() {},
      });
    } else {
      const started = startCluster();
      // tap is loaded only here: the bench imports the cluster helpers without a test run
      shared = import('tap').then(async ({ default: tap }) => {
        tap.teardown(async () => (await started.catch(() => undefined))?.destroy());
        return started;
      });
    }
  }
  return shared;
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** A fresh, empty database on `server` (the test server by default), dropped at teardown. */
export async function freshDatabase(t: Teardown, server?: PgServer): Promise<string> {
  const s = server ?? (await testServer());
  const name = `clibroker_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: s.adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  t.teardown(async () => {
    const c = new pg.Client({ connectionString: s.adminUrl });
    try {
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } catch {
      // the server is gone already (a test that stopped its own cluster)
    } finally {
      await c.end().catch(() => {});
    }
  });
  return s.urlOf(name);
}

/** Run SQL on its own connection to `url` (what another client of the database could do). */
export async function sql(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<Record<string, unknown>[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text, params)).rows as Record<string, unknown>[];
  } finally {
    await c.end();
  }
}
