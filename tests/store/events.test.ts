import t from 'tap';
import type { EventQuery, Store, StoreEvent } from '../../src/store/index.js';
import { storeAuditSink } from '../../src/store/index.js';
import { BACKENDS, freshStore } from './fixtures/backends.js';
import { blocked, codeOf, egress, execution } from './fixtures/index.js';

// A small trail over two runs, one second apart, appended out of time order on purpose.
const trail: Record<string, StoreEvent> = {
  get1: egress({ time: '2030-01-01T00:00:01.000Z' }),
  post: blocked({ time: '2030-01-01T00:00:02.000Z' }),
  done1: execution({
    time: '2030-01-01T00:00:03.000Z',
    type: 'extension.execution.failed',
    code: 'POLICY_BLOCKED',
    exitCode: 1,
  }),
  get2: egress({
    time: '2030-01-01T00:00:04.000Z',
    labels: { runId: 'run-2', extensionId: 'azure' },
    host: 'management.azure.com',
  }),
  del2: blocked({
    time: '2030-01-01T00:00:05.000Z',
    labels: { runId: 'run-2', extensionId: 'azure' },
    method: 'DELETE',
    policyCode: 'CLI_APPROVAL_PENDING',
  }),
  done2: execution({
    time: '2030-01-01T00:00:06.000Z',
    runId: 'run-2',
    extensionId: 'azure',
    cliTier: 'write',
    cliTierReason: 'requested',
  }),
  raised: {
    type: 'extension.cli_tier.raised',
    time: '2030-01-01T00:00:00.000Z',
    extensionId: 'azure',
    assignmentId: 'b1',
    cliId: 'az',
    who: 'alice',
    previous: 'read',
    new: 'write',
  },
  unlabelled: egress({
    time: '2030-01-01T00:00:07.000Z',
    labels: undefined,
    host: 'azure.microsoft.com',
    decision: 'deny',
    type: 'egress.blocked',
  }),
};

const queries: Record<string, [EventQuery, string[]]> = {
  'everything, oldest first by event time': [
    {},
    ['raised', 'get1', 'post', 'done1', 'get2', 'del2', 'done2', 'unlabelled'],
  ],
  'newest first': [{ order: 'newest', limit: 3 }, ['unlabelled', 'done2', 'del2']],
  'by run (egress runs come from labels.runId)': [{ runId: 'run-1' }, ['get1', 'post', 'done1']],
  'by run, newest first': [{ runId: 'run-2', order: 'newest' }, ['done2', 'del2', 'get2']],
  'by decision deny': [{ decision: 'deny' }, ['post', 'del2', 'unlabelled']],
  'by decision allow in run-2': [{ decision: 'allow', runId: 'run-2' }, ['get2']],
  'by type': [{ type: 'extension.execution.failed' }, ['done1']],
  'by several types': [
    { type: ['extension.execution.succeeded', 'extension.cli_tier.raised'] },
    ['raised', 'done2'],
  ],
  'by extension': [{ extensionId: 'azure' }, ['raised', 'get2', 'del2', 'done2']],
  'time range: since is inclusive, until exclusive': [
    { since: '2030-01-01T00:00:02.000Z', until: new Date('2030-01-01T00:00:05.000Z') },
    ['post', 'done1', 'get2'],
  ],
  'time range and limit, oldest first': [{ since: '2030-01-01T00:00:03.000Z', limit: 2 }, ['done1', 'get2']],
  'no match': [{ runId: 'run-9' }, []],
};

// Every case runs against each backend (a SQLite file, a PostgreSQL database).
for (const backend of BACKENDS) {
  t.test(backend.name, { skip: backend.skip }, async (t) => {
    const open = async (t: { teardown(fn: () => unknown): void }): Promise<Store> =>
      (await freshStore(t, backend)).store;

    async function seeded(t: {
      teardown(fn: () => unknown): void;
    }): Promise<{ store: Store; name: Map<number, string> }> {
      const store = await open(t);
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
      const store = await open(t);
      const badEvents: Record<string, unknown> = {
        'unknown type': { ...egress(), type: 'egress.maybe' },
        'unparsable time': egress({ time: 'yesterday' }),
        'odd decision': egress({ decision: 'perhaps' as 'allow' }),
      };
      for (const [n, e] of Object.entries(badEvents))
        t.equal(await codeOf(store.appendEvent(e as StoreEvent)), 'STORE_INPUT_INVALID', n);
      const badQueries: Record<string, EventQuery> = {
        'limit 0': { limit: 0 },
        'limit too big': { limit: 10_001 },
        'fractional limit': { limit: 1.5 },
        'unknown type': { type: 'egress.maybe' as 'egress.allowed' },
        'bad since': { since: 'soon' },
        'bad order': { order: 'sideways' as 'newest' },
        'bad cursor': { after: -1 },
      };
      for (const [n, q] of Object.entries(badQueries))
        t.equal(await codeOf(store.listEvents(q)), 'STORE_INPUT_INVALID', n);
      t.same(await store.listEvents(), [], 'nothing was written');
    });

    t.test('the audit trail is append-only, even to another connection', async (t) => {
      const { store, location } = await freshStore(t, backend);
      await store.appendEvent(egress());
      await t.rejects(backend.exec(location, 'DELETE FROM audit_events'), /append-only/);
      await t.rejects(backend.exec(location, "UPDATE audit_events SET decision = 'allow'"), /append-only/);
      t.equal((await store.listEvents()).length, 1);
    });

    t.test(
      'pages: after the last seq of a page comes the next, in either order, with the filters kept',
      async (t) => {
        const { store, name } = await seeded(t);
        const pages = async (q: EventQuery): Promise<string[][]> => {
          const out: string[][] = [];
          let after: number | undefined;
          for (;;) {
            const page = await store.listEvents({
              ...q,
              limit: 3,
              ...(after !== undefined ? { after } : {}),
            });
            if (page.length === 0) return out;
            out.push(page.map((s) => name.get(s.seq)!));
            after = page.at(-1)!.seq;
          }
        };
        t.same(await pages({}), [
          ['raised', 'get1', 'post'],
          ['done1', 'get2', 'del2'],
          ['done2', 'unlabelled'],
        ]);
        t.same(await pages({ order: 'newest' }), [
          ['unlabelled', 'done2', 'del2'],
          ['get2', 'done1', 'post'],
          ['get1', 'raised'],
        ]);
        t.same(await pages({ runId: 'run-2' }), [['get2', 'del2', 'done2']]);
        t.same(await store.listEvents({ after: 999 }), [], 'a cursor naming no event yields no page');
      },
    );

    t.test('storeAuditSink appends engine events and reports failures instead of throwing', async (t) => {
      const store = await open(t);
      const failures: unknown[] = [];
      const sink = storeAuditSink(store, (err) => failures.push(err));
      sink(egress());
      sink(blocked());
      // SQLite has written both before the sink returns; a server database answers later.
      while ((await store.listEvents()).length < 2) await new Promise((r) => setTimeout(r, 5));
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
      const store = await open(t);
      await store.close();
      await store.close();
      const calls: Record<string, () => Promise<unknown>> = {
        appendEvent: () => store.appendEvent(egress()),
        listEvents: () => store.listEvents(),
        getAssignmentTier: () => store.getAssignmentTier({ extensionId: 'e', assignmentId: 'a', cliId: 'c' }),
        setAssignmentTier: () =>
          store.setAssignmentTier({
            extensionId: 'e',
            assignmentId: 'a',
            cliId: 'c',
            tier: 'write',
            who: 'p',
          }),
        listApprovals: () => store.listApprovals(),
        getApproval: () => store.getApproval('x'),
      };
      for (const [n, call] of Object.entries(calls)) t.equal(await codeOf(call()), 'STORE_CLOSED', n);
    });
  });
}
