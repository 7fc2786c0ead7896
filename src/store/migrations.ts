/**
 * SQLite's numbered schema migrations (docs/store.md), and its statements and transaction for
 * the migration loop both backends share (migrate.ts). The rule: append only. A released
 * migration is never edited or renumbered; its checksum is recorded when applied and checked
 * on every open, so an edited one is refused rather than silently diverging between databases.
 */
import { BrokerError, errorMessage, isBrokerError } from '../errors.js';
import { type LedgerRow, type Migration, migrateSync, migrationChecksum } from './migrate.js';

export type { Migration } from './migrate.js';
export { migrationChecksum } from './migrate.js';

/**
 * The part of a better-sqlite3 connection the migrations use. Declared here, not imported,
 * so the published types do not need the driver's types: the driver is an optional peer.
 */
export interface SqliteConnection {
  exec(sql: string): unknown;
  prepare(sql: string): {
    all(...params: unknown[]): unknown[];
    get(...params: unknown[]): unknown;
    run(...params: unknown[]): unknown;
  };
  transaction<T>(fn: () => T): { immediate(): T };
}

const V1_INITIAL = `
CREATE TABLE tier_assignments (
  extension_id  TEXT NOT NULL,
  assignment_id TEXT NOT NULL,
  allow         TEXT NOT NULL CHECK (allow IN ('read', 'write')),
  updated_at    TEXT NOT NULL,
  updated_by    TEXT NOT NULL,
  PRIMARY KEY (extension_id, assignment_id)
) WITHOUT ROWID;

CREATE TABLE approvals (
  id                TEXT PRIMARY KEY,
  run_id            TEXT NOT NULL,
  digest            TEXT NOT NULL CHECK (length(digest) = 64 AND digest NOT GLOB '*[^0-9a-f]*'),
  method            TEXT NOT NULL,
  host              TEXT NOT NULL,
  path              TEXT NOT NULL,
  graphql_operation TEXT,
  body_preview      TEXT,
  tool              TEXT NOT NULL,
  tool_args         TEXT NOT NULL CHECK (json_valid(tool_args)),
  status            TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'consumed')),
  created_at        TEXT NOT NULL,
  decided_at        TEXT,
  decided_by        TEXT,
  consumed_at       TEXT,
  CHECK ((status = 'pending') = (decided_at IS NULL)),
  CHECK ((status = 'consumed') = (consumed_at IS NOT NULL))
);
CREATE INDEX approvals_status_run ON approvals (status, run_id);
CREATE INDEX approvals_run_digest ON approvals (run_id, digest, status);

-- Defence in depth: even a buggy caller cannot move an approval backwards or sideways
-- (rejected -> approved, consumed -> approved, ...).
CREATE TRIGGER approvals_transition BEFORE UPDATE OF status ON approvals
WHEN NOT ((OLD.status = 'pending' AND NEW.status IN ('approved', 'rejected'))
       OR (OLD.status = 'approved' AND NEW.status = 'consumed'))
BEGIN
  SELECT RAISE(ABORT, 'approval status transition not allowed');
END;

CREATE TABLE audit_events (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  type         TEXT NOT NULL,
  time         TEXT NOT NULL,
  time_ms      INTEGER NOT NULL,
  run_id       TEXT,
  extension_id TEXT,
  decision     TEXT CHECK (decision IN ('allow', 'deny')),
  data         TEXT NOT NULL CHECK (json_valid(data))
);
CREATE INDEX audit_events_time ON audit_events (time_ms, seq);
CREATE INDEX audit_events_run ON audit_events (run_id, time_ms, seq);
CREATE INDEX audit_events_type ON audit_events (type, time_ms, seq);
CREATE INDEX audit_events_decision ON audit_events (decision, time_ms, seq) WHERE decision IS NOT NULL;

-- The audit trail is append-only; a retention policy would arrive as its own migration.
CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
BEGIN
  SELECT RAISE(ABORT, 'audit events are append-only');
END;
CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
BEGIN
  SELECT RAISE(ABORT, 'audit events are append-only');
END;
`;

/** Every migration this build knows, in order. Append only. */
// An approval claimed for a request that then never reached the vendor (the connection to it
// failed) goes back to approved: consumed -> approved is the one backward step, and only
// releaseApproval takes it.
const V2_RELEASE = `
DROP TRIGGER approvals_transition;
CREATE TRIGGER approvals_transition BEFORE UPDATE OF status ON approvals
WHEN NOT ((OLD.status = 'pending' AND NEW.status IN ('approved', 'rejected'))
       OR (OLD.status = 'approved' AND NEW.status = 'consumed')
       OR (OLD.status = 'consumed' AND NEW.status = 'approved'))
BEGIN
  SELECT RAISE(ABORT, 'approval status transition not allowed');
END;
`;

// Conformance verdicts, by the sha256 of the program tried: the configuration offers a pinned
// image that requires one only when the latest verdict for its sha256 is a pass.
const V3_CONFORMANCE = `
CREATE TABLE conformance_verdicts (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  sha256     TEXT NOT NULL CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
  image      TEXT NOT NULL,
  executable TEXT NOT NULL,
  verdict    TEXT NOT NULL CHECK (verdict IN ('pass', 'refused')),
  code       TEXT,
  tool       TEXT,
  time       TEXT NOT NULL,
  CHECK ((verdict = 'refused') = (code IS NOT NULL))
);
CREATE INDEX conformance_verdicts_sha256 ON conformance_verdicts (sha256, seq);
`;

// The allow switch is per tool: one row per CLI of an assignment. A switch stored per
// assignment cannot say which of its tools it meant, and the store does not know an
// extension's CLIs, so none is carried: every tool starts at read again (fail closed) and the
// operator raises each one with `tiers set`. The old switches' history stays in the audit trail.
const V4_CLI_TIERS = `
CREATE TABLE cli_tiers (
  extension_id  TEXT NOT NULL,
  assignment_id TEXT NOT NULL,
  cli_id        TEXT NOT NULL,
  allow         TEXT NOT NULL CHECK (allow IN ('read', 'write')),
  updated_at    TEXT NOT NULL,
  updated_by    TEXT NOT NULL,
  PRIMARY KEY (extension_id, assignment_id, cli_id)
) WITHOUT ROWID;
DROP TABLE tier_assignments;
`;

// Retention: a prune may delete events older than a cutoff, and no other delete is allowed.
// SQLite has no per-transaction setting, so a prune writes its cutoff into retention_gate,
// deletes, and empties the gate again, all in one IMMEDIATE transaction: no other connection
// ever sees the gate open. Even then an event of a run with an open approval (pending, or
// approved and not yet consumed) is never deleted.
const V5_RETENTION = `
CREATE TABLE retention_gate (before_ms INTEGER NOT NULL);
DROP TRIGGER audit_events_no_delete;
CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
WHEN NOT EXISTS (SELECT 1 FROM retention_gate WHERE OLD.time_ms < before_ms)
  OR OLD.run_id IN (SELECT run_id FROM approvals WHERE status IN ('pending', 'approved'))
BEGIN
  SELECT RAISE(ABORT, 'audit events are append-only');
END;
`;

// Shared state for several `clibroker serve` replicas over one database: the review page's
// sessions (so a sign-in on one replica is honoured, and a sign-out seen, by every one), the
// guessing throttle's counters, and how long a call on some replica still holds an approval
// (a lease the waiting replica renews: `approvals.held_until`, a new nullable column). Times are epoch ms in INTEGER columns (64-bit).
// Rolling upgrade: additive only (two new tables and one nullable column; no existing
// trigger or statement changes), so replicas of the previous build keep working on a database migrated to this
// version: they never touch these tables. (A SQLite store is one process's: an older build
// that opens a file with a version it does not know still refuses it.) The sessions keep a
// rowid: of sessions issued in the same millisecond, the first issued ends first.
const V6_SERVE_SHARED = `
CREATE TABLE review_sessions (
  id        TEXT PRIMARY KEY,
  who       TEXT NOT NULL,
  issued_at INTEGER NOT NULL,
  last_seen INTEGER NOT NULL
);
ALTER TABLE approvals ADD COLUMN held_until TEXT;
CREATE INDEX review_sessions_who ON review_sessions (who, issued_at);
CREATE INDEX review_sessions_issued ON review_sessions (issued_at);
CREATE INDEX review_sessions_seen ON review_sessions (last_seen);

CREATE TABLE serve_throttle (
  key          TEXT PRIMARY KEY,
  window_start INTEGER NOT NULL,
  failures     INTEGER NOT NULL,
  last         INTEGER NOT NULL,
  locked_until INTEGER NOT NULL,
  strikes      INTEGER NOT NULL
) WITHOUT ROWID;
`;

// The audit trail's hash chain (docs/audit.md): each event's hash over its canonical encoding
// (chain.ts) and the hash of the event before it, and the chain's head: the last seq assigned
// and its hash. The store assigns seq itself (head + 1) inside its write transaction, so the
// chain's order is seq order. Events stored before this migration keep null hashes; the chain
// starts at the first event stored after it (its prev_hash is null).
const V7_AUDIT_CHAIN = `
ALTER TABLE audit_events ADD COLUMN prev_hash TEXT;
ALTER TABLE audit_events ADD COLUMN hash TEXT;
CREATE TABLE audit_chain (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  seq  INTEGER NOT NULL,
  hash TEXT
);
INSERT INTO audit_chain (id, seq, hash)
  VALUES (1, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'audit_events'), 0), NULL);
`;

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'initial', sql: V1_INITIAL },
  { version: 2, name: 'approval-release', sql: V2_RELEASE },
  { version: 3, name: 'conformance-verdicts', sql: V3_CONFORMANCE },
  { version: 4, name: 'cli-tiers', sql: V4_CLI_TIERS },
  { version: 5, name: 'retention', sql: V5_RETENTION },
  { version: 6, name: 'serve-shared-state', sql: V6_SERVE_SHARED },
  { version: 7, name: 'audit-chain', sql: V7_AUDIT_CHAIN },
];

const CREATE_LEDGER = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  checksum   TEXT NOT NULL,
  applied_at TEXT NOT NULL
)`;

/**
 * Bring `db` up to the last of `migrations`: every pending one, plus its ledger row, in one
 * IMMEDIATE transaction, so a database is never half-migrated and two processes opening the
 * same file cannot both migrate it. Idempotent. Refuses (STORE_SCHEMA_UNSUPPORTED, nothing
 * changed) a database holding a version this list lacks or one whose checksum differs.
 * Returns the versions applied now.
 */
export function applyMigrations(
  db: SqliteConnection,
  migrations: readonly Migration[] = MIGRATIONS,
  now: () => Date = () => new Date(),
): number[] {
  return migrateSync(
    {
      createLedger: () => db.exec(CREATE_LEDGER),
      // no `additive` column: a version this build lacks is refused whatever it did
      readLedger: () =>
        (
          db.prepare('SELECT version, checksum FROM schema_migrations ORDER BY version').all() as {
            version: number;
            checksum: string;
          }[]
        ).map((r): LedgerRow => ({ ...r, additive: false })),
      apply: (m, at) => {
        db.exec(m.sql);
        db.prepare(
          'INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)',
        ).run(m.version, m.name, migrationChecksum(m), at);
      },
      transaction(fn) {
        try {
          return db.transaction(fn).immediate();
        } catch (err) {
          if (isBrokerError(err)) throw err;
          throw new BrokerError('STORE_WRITE_FAILED', {
            message: errorMessage('STORE_WRITE_FAILED', {
              what: 'schema migration failed',
              cause: (err as Error).message,
            }),
            cause: err,
          });
        }
      },
    },
    { migrations, migrate: true, now },
  );
}

/** The highest applied version, 0 for a database never migrated. */
export function schemaVersion(db: SqliteConnection): number {
  const ledger = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
    .get();
  if (!ledger) return 0;
  const row = db.prepare('SELECT max(version) AS v FROM schema_migrations').get() as { v: number | null };
  return row.v ?? 0;
}
