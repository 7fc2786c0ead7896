import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import {
  applyMigrations,
  type Migration,
  MIGRATIONS,
  openSqliteStore,
  schemaVersion,
} from '../../src/store/index.js';
import { codeOf, egress, pending, tempDir } from './fixtures/index.js';

const LATEST = MIGRATIONS.length;
const V2_TEST: Migration = {
  version: LATEST + 1,
  name: 'test-notes',
  sql: 'CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);',
};

function ledger(path: string): { version: number; name: string; applied_at: string }[] {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare('SELECT version, name, applied_at FROM schema_migrations ORDER BY version')
      .all() as never;
  } finally {
    db.close();
  }
}

function tables(db: Database.Database): string[] {
  return (
    db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .all() as { name: string }[]
  ).map((r) => r.name);
}

t.test('MIGRATIONS are numbered 1..n with no gaps', async (t) => {
  t.same(
    MIGRATIONS.map((m) => m.version),
    MIGRATIONS.map((_, i) => i + 1),
  );
});

t.test('a fresh file is migrated to the latest version, in WAL mode', async (t) => {
  const path = join(tempDir(t), 'fresh.db');
  const store = openSqliteStore(path);
  await store.close();
  t.same(
    ledger(path).map((r) => r.version),
    MIGRATIONS.map((m) => m.version),
  );
  const db = new Database(path);
  t.teardown(() => db.close());
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  t.same(tables(db), [
    'approvals',
    'audit_events',
    'cli_tiers',
    'conformance_verdicts',
    'retention_gate',
    'schema_migrations',
  ]);
});

t.test('reopening applies nothing and keeps the ledger and the data', async (t) => {
  const path = join(tempDir(t), 'again.db');
  const first = openSqliteStore(path);
  await first.appendEvent(egress());
  await first.close();
  const before = ledger(path);
  const second = openSqliteStore(path);
  t.teardown(() => second.close());
  t.same(ledger(path), before, 'same rows, same applied_at');
  t.equal((await second.listEvents()).length, 1);
});

t.test('an existing file at an older version is brought forward, keeping its data', async (t) => {
  const path = join(tempDir(t), 'old.db');
  const store = openSqliteStore(path);
  const a = await store.createApproval(pending());
  await store.close();

  const db = new Database(path);
  t.same(applyMigrations(db, [...MIGRATIONS, V2_TEST]), [V2_TEST.version], 'only the new one is applied');
  t.same(applyMigrations(db, [...MIGRATIONS, V2_TEST]), [], 'idempotent');
  t.equal(schemaVersion(db), V2_TEST.version);
  t.ok(tables(db).includes('notes'));
  t.equal(
    (db.prepare('SELECT status FROM approvals WHERE id = ?').get(a.id) as { status: string }).status,
    'pending',
  );
  db.close();

  t.equal(
    await codeOf(Promise.resolve().then(() => openSqliteStore(path))),
    'STORE_SCHEMA_UNSUPPORTED',
    'this build does not know v2: refused',
  );
  t.equal(ledger(path).length, V2_TEST.version, 'the refused file is untouched');
});

t.test('a migration edited after it was applied is refused', async (t) => {
  const path = join(tempDir(t), 'edited.db');
  await openSqliteStore(path).close();
  const db = new Database(path);
  t.teardown(() => db.close());
  const edited = MIGRATIONS.map((m, i) => (i === 0 ? { ...m, sql: `${m.sql}\n-- edited` } : m));
  t.equal(
    await codeOf(Promise.resolve().then(() => applyMigrations(db, edited))),
    'STORE_SCHEMA_UNSUPPORTED',
  );
});

t.test('a failing migration rolls back every migration of that open', async (t) => {
  const path = join(tempDir(t), 'broken.db');
  const db = new Database(path);
  t.teardown(() => db.close());
  const broken: Migration = { version: LATEST + 1, name: 'broken', sql: 'CREATE TABLE oops (;' };
  t.equal(
    await codeOf(Promise.resolve().then(() => applyMigrations(db, [...MIGRATIONS, broken]))),
    'STORE_WRITE_FAILED',
  );
  t.equal(schemaVersion(db), 0, 'not half-migrated');
  t.same(tables(db), [], 'no table from migration 1 survived');
});

t.test('a misnumbered migration list is a bug, refused before touching the file', async (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  t.equal(
    await codeOf(Promise.resolve().then(() => applyMigrations(db, [{ ...V2_TEST, version: 3 }]))),
    'INTERNAL_ERROR',
  );
  t.equal(schemaVersion(db), 0);
});

t.test(':memory: works without WAL', async (t) => {
  const store = openSqliteStore(':memory:');
  t.teardown(() => store.close());
  t.equal(await store.appendEvent(egress()), 1);
});
