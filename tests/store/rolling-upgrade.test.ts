/**
 * The serve-shared-state migration is additive, so a rolling upgrade works: a broker of the
 * previous schema that is already running keeps working while the database is migrated
 * under it, and its decisions and records are read by a broker of this one. A broker of the
 * previous schema (re)started after the migrate opens the database too: the ledger marks the
 * new migration additive. One that is not additive is still refused.
 */
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { openPostgresStore } from '../../src/store/postgres.js';
import { PG_MIGRATIONS } from '../../src/store/pg-migrations.js';
import { freshDatabase, pgSkip, sql } from '../helpers/postgres.js';
import type { NewApproval } from '../../src/store/types.js';
import { codeOf, egress, pending } from './fixtures/index.js';

const PREVIOUS = PG_MIGRATIONS.slice(0, PG_MIGRATIONS.length - 1);

/**
 * The previous build's own approval statements (its column list, no notice): this build's
 * store object names the columns the new migration adds, so the old broker's approvals are
 * written as the old code wrote them. Its events and tier switches go through the store
 * object, whose statements did not change.
 */
const OLD_COLUMNS =
  'id, run_id, digest, method, host, path, graphql_operation, body_preview, tool, tool_args, status, created_at, decided_at, decided_by, consumed_at';
async function oldCreate(url: string, a: NewApproval): Promise<string> {
  const [row] = await sql(
    url,
    `INSERT INTO approvals (id, run_id, digest, method, host, path, graphql_operation, body_preview, tool, tool_args, status, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', $11) RETURNING ${OLD_COLUMNS}`,
    [
      randomUUID(),
      a.runId,
      a.digest,
      a.method,
      a.host,
      a.path,
      a.graphqlOperation ?? null,
      a.bodyPreview ?? null,
      a.tool,
      JSON.stringify(a.toolArgs),
      new Date().toISOString(),
    ],
  );
  return String(row!['id']);
}
async function oldDecide(url: string, id: string, to: 'approved' | 'rejected', who: string): Promise<string> {
  const [row] = await sql(
    url,
    `UPDATE approvals SET status = $2, decided_at = $3, decided_by = $4 WHERE id = $1 AND status = 'pending' RETURNING ${OLD_COLUMNS}`,
    [id, to, new Date().toISOString(), who],
  );
  return String(row?.['status']);
}

t.test('postgres: an old broker keeps working across the migrate', { skip: pgSkip() }, async (t) => {
  const url = await freshDatabase(t);
  const old = await openPostgresStore(url, { migrate: true, migrations: PREVIOUS });
  t.teardown(() => old.close());
  const before = { id: await oldCreate(url, pending()) };

  const migrated = await openPostgresStore(url, { migrate: true });
  t.teardown(() => migrated.close());
  t.same(migrated.applied, [PG_MIGRATIONS.length], 'only the new migration was applied');

  // the old broker, still running: every table it knows works as before
  const after = { id: await oldCreate(url, pending({ runId: 'run-2' })) };
  t.equal(await oldDecide(url, before.id, 'approved', 'alice'), 'approved');
  t.equal(await oldDecide(url, after.id, 'rejected', 'bob'), 'rejected');
  t.ok((await old.appendEvent(egress())) >= 1);
  t.equal(
    (
      await old.setAssignmentTier({
        extensionId: 'e',
        assignmentId: 'a',
        cliId: 'c',
        tier: 'write',
        who: 'op',
      })
    ).changed,
    true,
  );
  t.equal((await migrated.getApproval(before.id))?.status, 'approved', 'the new broker reads its decisions');
  await migrated.putReviewSession(
    { id: 's', who: 'alice', issuedAt: 1, lastSeen: 1 },
    { issuedAfter: 0, seenAfter: 0, perReviewer: 5, overall: 5 },
  );
  t.ok(await migrated.getReviewSession('s'), 'the new tables work beside it');

  const restarted = await openPostgresStore(url, { migrations: PREVIOUS });
  t.teardown(() => restarted.close());
  t.equal(
    (await restarted.getApproval(before.id))?.status,
    'approved',
    'an old broker (re)started after the migrate opens the database: the new migration only adds',
  );
});

t.test(
  'postgres: a later migration that is not additive refuses older brokers',
  { skip: pgSkip() },
  async (t) => {
    const url = await freshDatabase(t);
    const later = [
      ...PG_MIGRATIONS,
      {
        version: PG_MIGRATIONS.length + 1,
        name: 'drops-something',
        sql: 'ALTER TABLE approvals ADD COLUMN x int',
      },
    ];
    const migrated = await openPostgresStore(url, { migrate: true, migrations: later });
    await migrated.close();
    t.equal(
      await codeOf(openPostgresStore(url)),
      'STORE_SCHEMA_UNSUPPORTED',
      'a version this build does not know, not marked additive: refused',
    );
    const additive = [
      ...later,
      { version: later.length + 1, name: 'adds', sql: 'CREATE TABLE y (id int)', additive: true as const },
    ];
    const again = await openPostgresStore(url, { migrate: true, migrations: additive });
    await again.close();
    const opened = await openPostgresStore(url, { migrations: later });
    t.equal(
      await opened.schemaVersion(),
      additive.length,
      'a build that knows every migration but the additive last one opens it',
    );
    await opened.close();
  },
);
