/**
 * Retention on both backends: `pruneEvents` deletes the audit events older than a cutoff,
 * never those of a run with an open approval (pending, or approved and not yet consumed),
 * never an approval; a dry run changes nothing; an applied prune writes its
 * `store.events.pruned` event in the same transaction as the delete.
 */
import t from 'tap';
import type { Store } from '../../src/store/index.js';
import { type Backend, BACKENDS, freshStore } from './fixtures/backends.js';
import { codeOf, egress, execution, pending, tickingClock } from './fixtures/index.js';

const OLD = '2020-01-01T00:00:00.000Z';
const RECENT = '2030-01-01T00:00:00.000Z';
const CUTOFF = '2025-01-01T00:00:00.000Z';

/**
 * Old events of five runs (one per approval state, and one with none), an old event of no
 * run, and a recent one. Returns the runs whose old events a prune must keep.
 */
async function seed(store: Store): Promise<{ kept: string[]; gone: string[] }> {
  const approval = (runId: string) => store.createApproval(pending({ runId }));
  await approval('run-pending');
  await store.approve((await approval('run-approved')).id, 'rev');
  await store.reject((await approval('run-rejected')).id, 'rev');
  await store.approve((await approval('run-consumed')).id, 'rev');
  await store.consumeApproved(pending().digest, 'run-consumed');
  for (const runId of ['run-pending', 'run-approved', 'run-rejected', 'run-consumed', 'run-none']) {
    await store.appendEvent(egress({ time: OLD, labels: { runId, extensionId: 'github' } }));
    await store.appendEvent(execution({ time: OLD, runId }));
  }
  await store.appendEvent({
    type: 'extension.cli_tier.raised',
    time: OLD,
    extensionId: 'github',
    assignmentId: 'default',
    cliId: 'gh',
    who: 'admin',
    previous: 'read',
    new: 'write',
  });
  await store.appendEvent(egress({ time: RECENT, labels: { runId: 'run-none', extensionId: 'github' } }));
  return { kept: ['run-pending', 'run-approved'], gone: ['run-rejected', 'run-consumed', 'run-none'] };
}

/** Per backend: a trigger that refuses to write the prune's event, so the prune must roll back. */
const refusePruneEvent: Record<Backend['name'], string[]> = {
  sqlite: [
    `CREATE TRIGGER no_prune_event BEFORE INSERT ON audit_events WHEN NEW.type = 'store.events.pruned'
     BEGIN SELECT RAISE(ABORT, 'no prune event'); END`,
  ],
  postgres: [
    `CREATE FUNCTION no_prune_event() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN RAISE EXCEPTION 'no prune event'; END $$`,
    `CREATE TRIGGER no_prune_event BEFORE INSERT ON audit_events FOR EACH ROW
     WHEN (NEW.type = 'store.events.pruned') EXECUTE FUNCTION no_prune_event()`,
  ],
};

for (const backend of BACKENDS) {
  t.test(backend.name, { skip: backend.skip }, async (t) => {
    /** the run of each event older than the cutoff (an event of no run: its type) */
    const runsOf = async (store: Store) =>
      (await store.listEvents({ until: CUTOFF })).map(({ event: e }) =>
        'runId' in e ? e.runId : 'labels' in e ? e.labels?.['runId'] : e.type,
      );

    t.test('an applied prune keeps open approvals and their runs, and counts exactly', async (t) => {
      const { store } = await freshStore(t, backend);
      const { kept } = await seed(store);
      const approvals = await store.listApprovals();
      const r = await store.pruneEvents({ before: new Date(CUTOFF), dryRun: false, who: 'ops@example.com' });
      t.match(r, { events: 7, before: CUTOFF, dryRun: false }, '3 runs × 2 events, and the tier change');
      t.same((await runsOf(store)).sort(), [...kept, ...kept].sort(), 'only the open runs keep old events');
      t.equal((await store.listEvents({ since: CUTOFF, type: 'egress.allowed' })).length, 1, 'recent kept');
      t.same(await store.listApprovals(), approvals, 'no approval is ever deleted');
    });

    t.test('the prune writes its event, with who, the cutoff and the count', async (t) => {
      const { store } = await freshStore(t, backend);
      await seed(store);
      const r = await store.pruneEvents({ before: CUTOFF, dryRun: false, who: 'ops@example.com' });
      const written = (await store.listEvents({ type: 'store.events.pruned' })).map((e) => e.event);
      t.same(written, [r.event], 'one event, as returned');
      t.match(r.event, { type: 'store.events.pruned', who: 'ops@example.com', before: CUTOFF, events: 7 });
      t.ok(Date.parse(r.event!.time) >= Date.parse(CUTOFF), 'dated now: the same cutoff keeps it');
      const again = await store.pruneEvents({ before: CUTOFF, dryRun: false, who: 'ops@example.com' });
      t.equal(again.events, 0, 'a second prune finds nothing more');
    });

    t.test('a dry run counts what would go and changes nothing', async (t) => {
      const { store } = await freshStore(t, backend);
      await seed(store);
      const before = await store.listEvents();
      const dry = await store.pruneEvents({ before: CUTOFF, dryRun: true });
      t.same(dry, { events: 7, before: CUTOFF, dryRun: true });
      t.same(await store.listEvents(), before, 'nothing deleted, no event written');
    });

    t.test('the delete rolls back when its event cannot be written', async (t) => {
      const { store, location } = await freshStore(t, backend);
      await seed(store);
      const before = await store.listEvents();
      for (const q of refusePruneEvent[backend.name]) await backend.exec(location, q);
      t.equal(
        await codeOf(store.pruneEvents({ before: CUTOFF, dryRun: false, who: 'ops' })),
        'STORE_WRITE_FAILED',
      );
      t.same(await store.listEvents(), before, 'every event is still there');
    });

    t.test('the schema refuses any other delete, and an open run even below a cutoff', async (t) => {
      const { store, location } = await freshStore(t, backend);
      await seed(store);
      await t.rejects(backend.exec(location, 'DELETE FROM audit_events'), /append-only/, 'a plain delete');
      const gate =
        backend.name === 'sqlite'
          ? "INSERT INTO retention_gate VALUES (9e15); DELETE FROM audit_events WHERE run_id = 'run-pending'"
          : "BEGIN; SELECT set_config('clibroker.prune_before_ms', '9000000000000000', true); DELETE FROM audit_events WHERE run_id = 'run-pending'; COMMIT";
      if (backend.name === 'sqlite') {
        const { default: Database } = await import('better-sqlite3');
        const db = new Database(location);
        t.teardown(() => db.close());
        t.throws(
          () => db.transaction(() => db.exec(gate)).immediate(),
          /append-only/,
          'an open run, gate open',
        );
      } else await t.rejects(backend.exec(location, gate), /append-only/, 'an open run, cutoff set');
      t.equal((await store.listEvents({ runId: 'run-pending' })).length, 2);
    });

    const bad: Record<string, [input: Parameters<Store['pruneEvents']>[0], code: string]> = {
      'an applied prune without who': [{ before: CUTOFF, dryRun: false }, 'STORE_INPUT_INVALID'],
      'an empty who': [{ before: CUTOFF, dryRun: false, who: '' }, 'STORE_INPUT_INVALID'],
      'a cutoff that is not a time': [{ before: 'last week', dryRun: true }, 'STORE_INPUT_INVALID'],
    };
    for (const [name, [input, code]] of Object.entries(bad)) {
      t.test(`refused: ${name}`, async (t) => {
        const { store } = await freshStore(t, backend);
        t.equal(await codeOf(store.pruneEvents(input)), code);
      });
    }

    t.test('retentionDays prunes when the store opens, as `retention`', async (t) => {
      const { store, location } = await freshStore(t, backend);
      await seed(store);
      await store.close();
      // 2030-01-01 minus 1 day: every old event of a closed run goes, the recent one stays
      const kept = await backend.open(t, location, { now: tickingClock(RECENT), retentionDays: 1 });
      t.match(
        (await kept.listEvents({ type: 'store.events.pruned' })).map((e) => e.event),
        [{ who: 'retention', events: 7, before: /^2029-12-31T/ }],
      );
      t.same((await runsOf(kept)).sort(), ['run-approved', 'run-approved', 'run-pending', 'run-pending']);
      t.equal(
        await codeOf(backend.open(t, location, { retentionDays: 0 })),
        'STORE_INPUT_INVALID',
        'retentionDays must be positive',
      );
    });
  });
}
