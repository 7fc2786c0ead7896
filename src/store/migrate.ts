/**
 * The one migration loop both backends drive (docs/store.md): read the ledger, refuse a
 * database this build cannot work on (a gap in the ledger, a version it does not know that
 * does more than add, an edited migration), refuse a schema behind this build's when only
 * checking, then apply each pending migration in order and record it. SQLite and PostgreSQL
 * give only their statements and their transaction (migrations.ts, postgres.ts).
 *
 * The steps are written once, as a generator: SQLite's driver must stay synchronous (its
 * transaction is a plain function, and opening a SQLite store returns at once), PostgreSQL's
 * awaits every statement, and both run the same sequence of steps.
 */
import { createHash } from 'node:crypto';
import { BrokerError, brokerError } from '../errors.js';

export interface Migration {
  /** 1, 2, 3, … with no gaps */
  version: number;
  name: string;
  sql: string;
  /**
   * Only adds (tables, indexes, columns with defaults): a build that predates it still works
   * on a database that has it. The PostgreSQL ledger records the mark, so such a build opens
   * that database instead of refusing a version it does not know (rolling upgrades: replicas
   * of two versions side by side). Not part of the checksum.
   */
  additive?: true;
}

/** One row of a database's ledger (`schema_migrations`). */
export interface LedgerRow {
  version: number;
  checksum: string;
  /** recorded by PostgreSQL only; a SQLite row is never additive (a version it lacks is refused) */
  additive: boolean;
}

/** What a backend does for the loop, each inside the transaction it opened. */
interface Statements<R> {
  /** create the ledger when it is missing */
  createLedger(): R;
  /** the ledger's rows in version order; none when there is no ledger */
  readLedger(): R;
  /** run a migration's SQL and record its ledger row, applied at `at` */
  apply(m: Migration, at: string): R;
}

/** The backend's answer to each step, synchronously (SQLite). */
export interface SyncMigrationBackend extends Statements<unknown> {
  readLedger(): LedgerRow[];
  apply(m: Migration, at: string): void;
  /** run `fn` in one transaction: committed when it returns, rolled back when it throws */
  transaction<T>(fn: () => T): T;
}

/** The backend's answer to each step, awaited (PostgreSQL). */
export interface AsyncMigrationBackend extends Statements<Promise<unknown>> {
  readLedger(): Promise<LedgerRow[]>;
  apply(m: Migration, at: string): Promise<void>;
  /** run `fn` in one transaction: committed when it resolves, rolled back when it rejects */
  transaction<T>(fn: () => Promise<T>): Promise<T>;
}

/** What to do: `migrate` applies the pending migrations; without it a schema behind is refused. */
export interface MigrationRun {
  migrations: readonly Migration[];
  migrate: boolean;
  now: () => Date;
}

type Step = { do: 'createLedger' } | { do: 'readLedger' } | { do: 'apply'; migration: Migration; at: string };

/** sha256 of a migration's SQL, as its ledger row records it (both backends). */
export function migrationChecksum(m: Migration): string {
  return createHash('sha256').update(m.sql).digest('hex');
}

/** A misnumbered list is this build's bug: refused before the database is touched. */
function checkNumbering(migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new BrokerError('INTERNAL_ERROR', {
        message: `migration ${m.name} is numbered ${m.version}, expected ${i + 1}`,
      });
  });
}

/** Refuses a ledger this build cannot work on; returns how many of its migrations it holds. */
function checkLedger(rows: readonly LedgerRow[], migrations: readonly Migration[]): number {
  for (const [i, row] of rows.entries()) {
    const known = migrations[row.version - 1];
    // A gap (1, 3) means someone else's ledger: slicing by count below would be wrong.
    if (row.version !== i + 1)
      throw new BrokerError('STORE_SCHEMA_UNSUPPORTED', {
        details: { version: row.version, latestKnown: migrations.length },
      });
    // a later build's migration: only one that merely adds leaves this build's schema working
    if (!known) {
      if (row.additive) continue;
      throw new BrokerError('STORE_SCHEMA_UNSUPPORTED', {
        details: { version: row.version, latestKnown: migrations.length },
      });
    }
    if (migrationChecksum(known) !== row.checksum)
      throw brokerError(
        'STORE_SCHEMA_UNSUPPORTED',
        { version: row.version, name: known.name },
        { details: { version: row.version } },
      );
  }
  return rows.length;
}

/** The loop itself: each yielded step is answered by the backend (the ledger's rows for readLedger). */
function* migrationSteps(run: MigrationRun): Generator<Step, number[], LedgerRow[] | undefined> {
  const { migrations, migrate } = run;
  if (migrate) yield { do: 'createLedger' };
  const held = checkLedger((yield { do: 'readLedger' }) ?? [], migrations);
  const todo = migrations.slice(held);
  if (todo.length > 0 && !migrate)
    throw brokerError(
      'STORE_SCHEMA_OUTDATED',
      { at: held, needs: migrations.length },
      { details: { version: held, latestKnown: migrations.length } },
    );
  // One time for the batch: the migrations of one open are applied together.
  const at = run.now().toISOString();
  const applied: number[] = [];
  for (const migration of todo) {
    yield { do: 'apply', migration, at };
    applied.push(migration.version);
  }
  return applied;
}

function perform<R>(b: Statements<R>, step: Step): R {
  if (step.do === 'createLedger') return b.createLedger();
  if (step.do === 'readLedger') return b.readLedger();
  return b.apply(step.migration, step.at);
}

/** Runs the loop on a synchronous backend in one of its transactions; the versions applied now. */
export function migrateSync(b: SyncMigrationBackend, run: MigrationRun): number[] {
  checkNumbering(run.migrations);
  return b.transaction(() => {
    const steps = migrationSteps(run);
    let next = steps.next();
    while (!next.done) next = steps.next(perform(b, next.value) as LedgerRow[] | undefined);
    return next.value;
  });
}

/** Runs the loop on an asynchronous backend in one of its transactions; the versions applied now. */
export async function migrateAsync(b: AsyncMigrationBackend, run: MigrationRun): Promise<number[]> {
  checkNumbering(run.migrations);
  return b.transaction(async () => {
    const steps = migrationSteps(run);
    let next = steps.next();
    while (!next.done) next = steps.next((await perform(b, next.value)) as LedgerRow[] | undefined);
    return next.value;
  });
}
