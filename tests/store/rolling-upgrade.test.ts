/**
 * The serve-shared-state migration is additive, so a rolling upgrade works: a broker of the
 * previous schema that is already running keeps working while the database is migrated
 * under it, and its decisions and records are read by a broker of this one. (Restarting an
 * old broker after the migrate is refused, as any unknown version is.)
 */
import t from 'tap';
import { openPostgresStore } from '../../src/store/postgres.js';
import { PG_MIGRATIONS } from '../../src/store/pg-migrations.js';
import { freshDatabase, pgSkip } from '../helpers/postgres.js';
import { codeOf, egress, pending } from './fixtures/index.js';

const PREVIOUS = PG_MIGRATIONS.slice(0, PG_MIGRATIONS.length - 1);

t.test('postgres: an old broker keeps working across the migrate', { skip: pgSkip() }, async (t) => {
  const url = await freshDatabase(t);
  const old = await openPostgresStore(url, { migrate: true, migrations: PREVIOUS });
  t.teardown(() => old.close());
  const before = await old.createApproval(pending());

  const migrated = await openPostgresStore(url, { migrate: true });
  t.teardown(() => migrated.close());
  t.same(migrated.applied, [PG_MIGRATIONS.length], 'only the new migration was applied');

  // the old broker, still running: every table it knows works as before
  const after = await old.createApproval(pending({ runId: 'run-2' }));
  t.equal((await old.approve(before.id, 'alice')).status, 'approved');
  t.equal((await old.reject(after.id, 'bob')).status, 'rejected');
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

  t.equal(
    await codeOf(openPostgresStore(url, { migrations: PREVIOUS })),
    'STORE_SCHEMA_UNSUPPORTED',
    'an old broker (re)started after the migrate is refused: restart on the new build',
  );
});
