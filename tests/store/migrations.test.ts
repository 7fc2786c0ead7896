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
import { migrationChecksum } from '../../src/store/migrations.js';
import { PG_MIGRATIONS } from '../../src/store/pg-migrations.js';
import { codeOf, egress, pending, tempDir } from './fixtures/index.js';

const LATEST = MIGRATIONS.length;

/**
 * Every released migration as `version name sha256`, both backends. A line here never
 * changes: a database records the checksum when it applies the migration and refuses an
 * edited one. A new migration appends its line.
 */
const RELEASED = [
  '1 initial 508b6b32e6a73bcc6bc4b69d377d55abc20e0697e79eccc39d910f2ace2acd2a',
  '2 approval-release 575cd57d3dcd2026f02c3c3da9944b1e6be8401ced680a477a8afeeb9e0272ea',
  '3 conformance-verdicts 9c64099805ffdec23488efc98aeb0d348f78c8d32267e2dc6c29e4bcc9dd61b8',
  '4 cli-tiers 97a4c595aca38489f899691268e48af57df1b9be71dbd27c61c9fa6376979141',
  '5 retention f91f27589803d20bb43777d063b23a9422494e71b64291a8f9261aba9226b7a3',
  '6 serve-shared-state 533ff1fae2f04fc002ed3e6b144d9eb5240c4cb426989293ad30016b03788b54',
  '7 audit-chain 339ef72442f8a61ed8faa6a9262b47bf3b52ec35c5b3cdbb57359108fdb33f12',
];
const PG_RELEASED = [
  '1 initial d7e92c03869afed3564581760e8cad3252de9768ed2fecb491e9e3bc7affa342',
  '2 approval-release 75b56fde1278771032b00fdc623d54bbf5f6088417e986b87659e717f840bed0',
  '3 conformance-verdicts 6e947ebefe8e464265d181fda321dbd813e53d7fda978afb4eb00dae06414a6c',
  '4 cli-tiers 4b545864e23f7dc2dc082b323f6d6fea058f6dc0761bb383fc6b265eca6b0528',
  '5 retention 43fb9a5ed53d71c1a36fa427d9ca252aa0e7eff75c482c6cfdf18f43a393d382',
  '6 serve-shared-state 8717151ac9958b0da9a1faa7a991a261c9f06100690034a2e4a9c572293e9deb',
  '7 audit-chain 25e2e06aad1c339651ce5bdd7b0bf9a007912004af483dd28f3da489e71127fa',
];
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
    'audit_chain',
    'audit_events',
    'cli_tiers',
    'conformance_verdicts',
    'retention_gate',
    'review_sessions',
    'schema_migrations',
    'serve_throttle',
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

t.test('released migrations keep their checksums (append only: never edited)', async (t) => {
  // sha256 of each released migration's SQL, as every database's ledger records it
  t.same(
    MIGRATIONS.map((m) => `${m.version} ${m.name} ${migrationChecksum(m)}`),
    RELEASED,
  );
  t.same(
    PG_MIGRATIONS.map((m) => `${m.version} ${m.name} ${migrationChecksum(m)}`),
    PG_RELEASED,
  );
});

t.test(':memory: works without WAL', async (t) => {
  const store = openSqliteStore(':memory:');
  t.teardown(() => store.close());
  t.equal(await store.appendEvent(egress()), 1);
});
