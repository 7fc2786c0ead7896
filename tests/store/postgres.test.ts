/**
 * What only the PostgreSQL store has: migrations a shared database gets on purpose, URLs
 * whose passwords never reach a message, retention, and surviving a server restart.
 */
import t from 'tap';
import type { BrokerError } from '../../src/errors.js';
import { MIGRATIONS, openStore, redactStoreUrl } from '../../src/store/index.js';
import type { Migration } from '../../src/store/migrations.js';
import { openPostgresStore } from '../../src/store/postgres.js';
import { PG_MIGRATIONS } from '../../src/store/pg-migrations.js';
import { freshDatabase, pgSkip, type PgServer, sql, startCluster } from '../helpers/postgres.js';
import { codeOf, egress, pending } from './fixtures/index.js';

const skip = pgSkip();
const LATEST = PG_MIGRATIONS.length;
const V2_TEST: Migration = {
  version: LATEST + 1,
  name: 'test-notes',
  sql: 'CREATE TABLE notes (id bigint PRIMARY KEY, body text NOT NULL);',
};

const tables = async (url: string): Promise<string[]> =>
  (await sql(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")).map(
    (r) => String(r['tablename']),
  );
const ledger = async (url: string): Promise<number[]> =>
  (await sql(url, 'SELECT version FROM schema_migrations ORDER BY version')).map((r) => Number(r['version']));
const errOf = (p: Promise<unknown>): Promise<BrokerError> =>
  p.then(
    () => {
      throw new Error('resolved');
    },
    (e: BrokerError) => e,
  );

t.test('migrations', { skip }, async (t) => {
  t.test('a never-migrated database is refused with STORE_SCHEMA_OUTDATED and left empty', async (t) => {
    const url = await freshDatabase(t);
    const err = await errOf(openStore(url));
    t.equal(err.code, 'STORE_SCHEMA_OUTDATED');
    t.match(err.message, /clibroker store migrate/);
    t.same(await tables(url), [], 'nothing was created');
  });

  t.test(
    'migrate applies every migration once; a second run applies nothing; then a broker opens it',
    async (t) => {
      const url = await freshDatabase(t);
      const first = await openPostgresStore(url, { migrate: true });
      t.same(
        first.applied,
        PG_MIGRATIONS.map((m) => m.version),
      );
      await first.close();
      const again = await openPostgresStore(url, { migrate: true });
      t.same(again.applied, [], 'idempotent');
      t.equal(await again.schemaVersion(), LATEST);
      await again.close();
      t.same(await tables(url), [
        'approvals',
        'audit_chain',
        'audit_events',
        'cli_tiers',
        'conformance_verdicts',
        'review_sessions',
        'schema_migrations',
        'serve_throttle',
      ]);
      const broker = await openStore(url);
      t.teardown(() => broker.close());
      t.equal(await broker.appendEvent(egress()), 1);
      t.equal(PG_MIGRATIONS.length, MIGRATIONS.length, 'both backends are at the same schema version');
    },
  );

  t.test('brokers migrating at once: one applies, the others find it done', async (t) => {
    const url = await freshDatabase(t);
    const opened = await Promise.all(
      Array.from({ length: 6 }, () => openPostgresStore(url, { migrate: true })),
    );
    t.teardown(() => Promise.all(opened.map((s) => s.close())));
    t.same(opened.map((s) => s.applied.length).sort(), [0, 0, 0, 0, 0, LATEST]);
    t.same(
      await ledger(url),
      PG_MIGRATIONS.map((m) => m.version),
    );
  });

  t.test('a database at a newer version is refused (open and migrate) and left untouched', async (t) => {
    const url = await freshDatabase(t);
    const newer = await openPostgresStore(url, { migrate: true, migrations: [...PG_MIGRATIONS, V2_TEST] });
    t.same(newer.applied, [...PG_MIGRATIONS.map((m) => m.version), V2_TEST.version]);
    await newer.close();
    t.equal(await codeOf(openStore(url)), 'STORE_SCHEMA_UNSUPPORTED', 'a broker of this build refuses it');
    t.equal(
      await codeOf(openPostgresStore(url, { migrate: true })),
      'STORE_SCHEMA_UNSUPPORTED',
      'and so does migrate',
    );
    t.same(await ledger(url), [...PG_MIGRATIONS.map((m) => m.version), V2_TEST.version]);
  });

  t.test('a migration edited after it was applied is refused', async (t) => {
    const url = await freshDatabase(t);
    await (await openPostgresStore(url, { migrate: true })).close();
    const edited = PG_MIGRATIONS.map((m, i) => (i === 0 ? { ...m, sql: `${m.sql}\n-- edited` } : m));
    t.equal(await codeOf(openPostgresStore(url, { migrations: edited })), 'STORE_SCHEMA_UNSUPPORTED');
  });

  t.test('a failing migration rolls back every migration of that run', async (t) => {
    const url = await freshDatabase(t);
    const broken: Migration = { version: LATEST + 1, name: 'broken', sql: 'CREATE TABLE oops (;' };
    t.equal(
      await codeOf(openPostgresStore(url, { migrate: true, migrations: [...PG_MIGRATIONS, broken] })),
      'STORE_WRITE_FAILED',
    );
    t.same(await tables(url), [], 'not half-migrated');
  });
});

t.test('passwords in URLs never reach a message', { skip }, async (t) => {
  const url = await freshDatabase(t);
  const u = new URL(url);
  const password = decodeURIComponent(u.password);
  t.ok(password.length >= 8, 'the test server has a password');
  t.equal(redactStoreUrl(url), url.replace(`:${u.password}@`, ':***@'));
  t.equal(
    redactStoreUrl('postgres://me:s3cret@db/x?sslpassword=k3y&application_name=a'),
    'postgres://me:***@db/x?sslpassword=***&application_name=a',
  );
  t.equal(redactStoreUrl('postgres://me:s3cret@[bad'), 'postgres://<unparsable URL, not shown>');
  t.equal(
    redactStoreUrl('/var/lib/clibroker/store.db'),
    '/var/lib/clibroker/store.db',
    'a path is shown as is',
  );

  const failures: Record<string, () => Promise<unknown>> = {
    'a wrong password': () =>
      openStore(url.replace(`:${u.password}@`, ':wrong-but-secret@'), { reconnectWindowMs: 200 }),
    'no server on that port': () => openStore(url.replace(`:${u.port}/`, ':1/'), { reconnectWindowMs: 200 }),
    'no such database': () => openStore(url.replace(/\/[^/]+$/, '/nope'), { reconnectWindowMs: 200 }),
  };
  for (const [name, open] of Object.entries(failures)) {
    const err = await errOf(open());
    t.equal(err.code, 'STORE_UNAVAILABLE', name);
    const text = `${err.message} ${JSON.stringify(err)} ${String(err.stack)}`;
    t.notOk(
      text.includes(password) || text.includes('wrong-but-secret'),
      `${name}: no password in the error`,
    );
    t.match(
      String(err.details?.['store']),
      /postgres:\/\/clibroker:\*\*\*@127\.0\.0\.1/,
      `${name}: details name the server, redacted`,
    );
    t.notMatch(err.message, /127\.0\.0\.1/, `${name}: the message does not: a front door shows it`);
  }
});

t.test(
  'retention: prune deletes only events older than the cutoff; nothing else may delete',
  { skip },
  async (t) => {
    const url = await freshDatabase(t);
    const store = await openPostgresStore(url, { migrate: true });
    t.teardown(() => store.close());
    await store.appendEvent(egress({ time: '2020-01-01T00:00:00.000Z' }));
    await store.appendEvent(egress({ time: '2020-06-01T00:00:00.000Z' }));
    const recent = new Date().toISOString();
    await store.appendEvent(egress({ time: recent }));
    t.match(
      await store.pruneEvents({ before: new Date('2020-03-01T00:00:00.000Z'), dryRun: false, who: 'ops' }),
      {
        events: 1,
      },
    );
    t.same(
      (await store.listEvents({ type: 'egress.allowed' })).map((e) => e.event.time),
      ['2020-06-01T00:00:00.000Z', recent],
    );
    await t.rejects(sql(url, 'DELETE FROM audit_events'), /append-only/, 'a plain DELETE is still refused');
    await t.rejects(
      sql(
        url,
        "BEGIN; SELECT set_config('clibroker.prune_before_ms', '1', true); DELETE FROM audit_events; COMMIT",
      ),
      /append-only/,
      'a cutoff below the events deletes none of them',
    );
    await t.rejects(sql(url, 'TRUNCATE audit_events'), /append-only/);

    const kept = await openPostgresStore(url, { retentionDays: 30 });
    await kept.close();
    t.same(
      (await store.listEvents({ type: 'egress.allowed' })).map((e) => e.event.time),
      [recent],
      'retentionDays prunes when the store opens',
    );
    t.match(
      (await store.listEvents({ type: 'store.events.pruned' })).map((e) => e.event),
      [
        { who: 'ops', events: 1 },
        { who: 'retention', events: 1 },
      ],
      'each prune is audited',
    );
  },
);

t.test(
  'a PostgreSQL restart: calls in flight fail with a code, nothing acknowledged is lost, the store reconnects',
  { skip, timeout: 120_000 },
  async (t) => {
    // A cluster of this test's own: it is stopped and started under the store.
    const server: PgServer = await startCluster();
    t.teardown(() => server.destroy());
    const url = server.urlOf('postgres');
    const store = await openPostgresStore(url, { migrate: true, reconnectWindowMs: 15_000 });
    t.teardown(() => store.close());
    const a = await store.createApproval(pending());
    await store.approve(a.id, 'alice');

    // A call in flight: another client holds a lock the consume must wait for.
    const { default: pg } = await import('pg');
    const holder = new pg.Client({ connectionString: url });
    holder.on('error', () => {});
    await holder.connect();
    await holder.query('BEGIN; LOCK TABLE approvals IN ACCESS EXCLUSIVE MODE');
    const inFlight = codeOf(store.consumeApproved(a.digest, 'run-1'));
    await new Promise((r) => setTimeout(r, 200));

    // A stream of appends across the restart: each either resolves (then it is stored) or fails with a code.
    const outcomes: Promise<{ i: number; seq?: number; code?: string }>[] = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        outcomes.push(
          store.appendEvent(egress({ path: `/e/${i}` })).then(
            (seq) => ({ i, seq }),
            (e: BrokerError) => ({ i, code: e.code }),
          ),
        );
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    await new Promise((r) => setTimeout(r, 150));
    server.stop!('immediate');
    t.equal(await inFlight, 'STORE_UNAVAILABLE', 'the consume in flight failed with a code');
    await new Promise((r) => setTimeout(r, 500));
    server.start!();
    await new Promise((r) => setTimeout(r, 300));
    writing = false;
    await writer;
    const done = await Promise.all(outcomes);
    await holder.end().catch(() => {});

    const stored = new Set(
      (await store.listEvents({ limit: 10_000 })).map((e) => (e.event as { path: string }).path),
    );
    const acked = done.filter((d) => d.seq !== undefined);
    const failed = done.filter((d) => d.seq === undefined);
    t.ok(acked.length > 10, `${acked.length} appends acknowledged across the restart`);
    t.same(
      acked.filter((d) => !stored.has(`/e/${d.i}`)),
      [],
      'every acknowledged event is stored',
    );
    t.same(
      failed.filter((d) => d.code !== 'STORE_UNAVAILABLE'),
      [],
      `an append that failed (${failed.length}) failed with STORE_UNAVAILABLE`,
    );
    // The approval the failed consume aimed at is still there, approved, and can be consumed once.
    t.equal((await store.getApproval(a.id))?.status, 'approved');
    t.equal((await store.consumeApproved(a.digest, 'run-1'))?.id, a.id);
    t.equal(await store.consumeApproved(a.digest, 'run-1'), undefined);

    // Down for longer than the reconnect window: a call fails with a code, not a hang.
    const short = await openPostgresStore(url, { reconnectWindowMs: 300 });
    t.teardown(() => short.close());
    // The server stays down until the call has answered: it can only end by giving up (within the test's limit).
    server.stop!('fast');
    t.equal(
      await codeOf(short.appendEvent(egress())),
      'STORE_UNAVAILABLE',
      'given up once the window passed, while the server is still down',
    );
    server.start!();
    t.ok((await short.appendEvent(egress())) > 0, 'and it works again once the server is back');
  },
);

t.test('the front door and the broker do not load pg; opening a postgres:// store does', async (t) => {
  const { execFileSync } = await import('node:child_process');
  const probe = `
    import { createRequire } from 'node:module';
    const require = createRequire(import.meta.url);
    const pgLoaded = () => Object.keys(require.cache).some((k) => /[\\\\/]node_modules[\\\\/]pg[\\\\/]/.test(k));
    await import(${JSON.stringify(new URL('../../src/index.ts', import.meta.url).href)});
    await import(${JSON.stringify(new URL('../../src/broker/broker.ts', import.meta.url).href)});
    const before = pgLoaded();
    await import(${JSON.stringify(new URL('../../src/store/postgres.ts', import.meta.url).href)});
    console.log(JSON.stringify({ before, after: pgLoaded() }));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], {
    encoding: 'utf8',
  });
  t.same(JSON.parse(out), { before: false, after: true });
});
