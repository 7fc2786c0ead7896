import Database from 'better-sqlite3';
import t from 'tap';
import { type EventQuery, openSqliteStore, type Store, type StoreEvent, storeAuditSink } from '../../src/store/index.js';
import { blocked, codeOf, egress, execution, fileStore } from './fixtures/index.js';

// A small trail over two runs, one second apart, appended out of time order on purpose.
const trail: Record<string, StoreEvent> = {
  get1: egress({ time: '2030-01-01T00:00:01.000Z' }),
  post: blocked({ time: '2030-01-01T00:00:02.000Z' }),
  done1: execution({ time: '2030-01-01T00:00:03.000Z', type: 'extension.execution.failed', code: 'POLICY_BLOCKED', exitCode: 1 }),
  get2: egress({ time: '2030-01-01T00:00:04.000Z', labels: { runId: 'run-2', extensionId: 'azure' }, host: 'management.azure.com' }),
  del2: blocked({ time: '2030-01-01T00:00:05.000Z', labels: { runId: 'run-2', extensionId: 'azure' }, method: 'DELETE', policyCode: 'CLI_APPROVAL_PENDING' }),
  done2: execution({ time: '2030-01-01T00:00:06.000Z', runId: 'run-2', extensionId: 'azure', cliTier: 'write', cliTierReason: 'requested' }),
  raised: { type: 'extension.cli_tier.raised', time: '2030-01-01T00:00:00.000Z', extensionId: 'azure', assignmentId: 'b1', who: 'alice', previous: 'read', new: 'write' },
  unlabelled: egress({ time: '2030-01-01T00:00:07.000Z', labels: undefined, host: 'azure.microsoft.com', decision: 'deny', type: 'egress.blocked' }),
};

const queries: Record<string, [EventQuery, string[]]> = {
  'everything, oldest first by event time': [{}, ['raised', 'get1', 'post', 'done1', 'get2', 'del2', 'done2', 'unlabelled']],
  'newest first': [{ order: 'newest', limit: 3 }, ['unlabelled', 'done2', 'del2']],
  'by run (egress runs come from labels.runId)': [{ runId: 'run-1' }, ['get1', 'post', 'done1']],
  'by run, newest first': [{ runId: 'run-2', order: 'newest' }, ['done2', 'del2', 'get2']],
  'by decision deny': [{ decision: 'deny' }, ['post', 'del2', 'unlabelled']],
  'by decision allow in run-2': [{ decision: 'allow', runId: 'run-2' }, ['get2']],
  'by type': [{ type: 'extension.execution.failed' }, ['done1']],
  'by several types': [{ type: ['extension.execution.succeeded', 'extension.cli_tier.raised'] }, ['raised', 'done2']],
  'by extension': [{ extensionId: 'azure' }, ['raised', 'get2', 'del2', 'done2']],
  'time range: since is inclusive, until exclusive': [{ since: '2030-01-01T00:00:02.000Z', until: new Date('2030-01-01T00:00:05.000Z') }, ['post', 'done1', 'get2']],
  'time range and limit, oldest first': [{ since: '2030-01-01T00:00:03.000Z', limit: 2 }, ['done1', 'get2']],
  'no match': [{ runId: 'run-9' }, []],
};

async function seeded(t: { teardown(fn: () => unknown): void }): Promise<{ store: Store; name: Map<number, string> }> {
  const store = openSqliteStore(':memory:');
  t.teardown(() => store.close());
  const name = new Map<number, string>();
  for (const [k, e] of Object.entries(trail)) name.set(await store.appendEvent(e), k);
  return { store, name };
}

t.test('event queries', async (t) => {
  const { store, name } = await seeded(t);
  t.plan(Object.keys(queries).length + 1);
  for (const [title, [q, want]] of Object.entries(queries)) {
    t.same(
      (await store.listEvents(q)).map((s) => name.get(s.seq)),
      want,
      title,
    );
  }
  const [first] = await store.listEvents({ type: 'egress.blocked', runId: 'run-1' });
  t.same(first?.event, trail['post'], 'the event reads back whole');
});

t.test('seq increases with every append', async (t) => {
  const { name } = await seeded(t);
  t.same([...name.keys()], [1, 2, 3, 4, 5, 6, 7, 8]);
});

t.test('malformed events and queries are refused', async (t) => {
  const store = openSqliteStore(':memory:');
  t.teardown(() => store.close());
  const badEvents: Record<string, unknown> = {
    'unknown type': { ...egress(), type: 'egress.maybe' },
    'unparsable time': egress({ time: 'yesterday' }),
    'odd decision': egress({ decision: 'perhaps' as 'allow' }),
  };
  for (const [n, e] of Object.entries(badEvents)) t.equal(await codeOf(store.appendEvent(e as StoreEvent)), 'STORE_INPUT_INVALID', n);
  const badQueries: Record<string, EventQuery> = {
    'limit 0': { limit: 0 },
    'limit too big': { limit: 10_001 },
    'fractional limit': { limit: 1.5 },
    'unknown type': { type: 'egress.maybe' as 'egress.allowed' },
    'bad since': { since: 'soon' },
    'bad order': { order: 'sideways' as 'newest' },
  };
  for (const [n, q] of Object.entries(badQueries)) t.equal(await codeOf(store.listEvents(q)), 'STORE_INPUT_INVALID', n);
  t.same(await store.listEvents(), [], 'nothing was written');
});

t.test('the audit trail is append-only, even to another connection', async (t) => {
  const { store, path } = fileStore(t);
  await store.appendEvent(egress());
  const db = new Database(path);
  t.teardown(() => db.close());
  t.throws(() => db.prepare('DELETE FROM audit_events').run(), /append-only/);
  t.throws(() => db.prepare("UPDATE audit_events SET decision = 'allow'").run(), /append-only/);
  t.equal((await store.listEvents()).length, 1);
});

t.test('storeAuditSink appends engine events and reports failures instead of throwing', async (t) => {
  const store = openSqliteStore(':memory:');
  const failures: unknown[] = [];
  const sink = storeAuditSink(store, (err) => failures.push(err));
  sink(egress());
  sink(blocked());
  t.same(
    (await store.listEvents()).map((s) => s.event.type),
    ['egress.allowed', 'egress.blocked'],
  );
  await store.close();
  sink(egress());
  await new Promise((r) => setImmediate(r));
  t.match(failures, [{ code: 'STORE_CLOSED' }]);
});

t.test('a closed store refuses every call with STORE_CLOSED; close is idempotent', async (t) => {
  const store = openSqliteStore(':memory:');
  await store.close();
  await store.close();
  const calls: Record<string, () => Promise<unknown>> = {
    appendEvent: () => store.appendEvent(egress()),
    listEvents: () => store.listEvents(),
    getAssignmentTier: () => store.getAssignmentTier({ extensionId: 'e', assignmentId: 'a' }),
    setAssignmentTier: () => store.setAssignmentTier({ extensionId: 'e', assignmentId: 'a', tier: 'write', who: 'p' }),
    listApprovals: () => store.listApprovals(),
    getApproval: () => store.getApproval('x'),
  };
  for (const [n, call] of Object.entries(calls)) t.equal(await codeOf(call()), 'STORE_CLOSED', n);
});
