/**
 * Health and approval notices, on both backends: `ping` answers fast (STORE_CLOSED after
 * close, STORE_UNAVAILABLE when the database is gone, without waiting out the reconnect
 * window), and `watchApprovals` hears decisions: this store object's own on both, and on
 * PostgreSQL those of another store object (another replica's pool) through LISTEN/NOTIFY,
 * also after the listening connection was killed.
 */
import t from 'tap';
import type { Store } from '../../src/store/index.js';
import { openPostgresStore } from '../../src/store/postgres.js';
import { pgSkip, sql, startCluster } from '../helpers/postgres.js';
import { BACKENDS, freshStore } from './fixtures/backends.js';
import { codeOf, pending } from './fixtures/index.js';

/** Resolves with the first id `store`'s watcher hears that `want` accepts. */
function heard(store: Store, want: (id: string) => boolean): { ids: Promise<string>; stop(): void } {
  let stop = (): void => {};
  const ids = new Promise<string>((resolve) => {
    stop = store.watchApprovals((id) => {
      if (want(id)) resolve(id);
    });
  });
  return { ids, stop };
}

for (const backend of BACKENDS) {
  t.test(backend.name, { skip: backend.skip }, async (t) => {
    t.test('ping answers; after close it rejects STORE_CLOSED', async (t) => {
      const { store } = await freshStore(t, backend);
      t.equal(await codeOf(store.ping()), 'resolved');
      t.equal(await codeOf(store.ping(500)), 'resolved');
      t.equal(await codeOf(store.ping(0)), 'STORE_INPUT_INVALID', 'a timeout is positive');
      t.equal(await codeOf(store.ping(Number.NaN)), 'STORE_INPUT_INVALID');
      await store.close();
      t.equal(await codeOf(store.ping()), 'STORE_CLOSED');
    });

    t.test("this store object's approve and reject reach its watchers", async (t) => {
      const { store } = await freshStore(t, backend);
      const a = await store.createApproval(pending());
      const b = await store.createApproval(pending());
      const seen: string[] = [];
      const stop = store.watchApprovals((id) => seen.push(id));
      // a throwing watcher, and one whose promise rejects, disturb neither the store nor the others
      store.watchApprovals(() => {
        throw new Error('watcher bug');
      });
      store.watchApprovals((() => Promise.reject(new Error('async watcher bug'))) as never);
      const onA = heard(store, (id) => id === a.id);
      await store.approve(a.id, 'alice');
      t.equal(await onA.ids, a.id, 'approve heard');
      const onB = heard(store, (id) => id === b.id);
      await store.reject(b.id, 'bob');
      t.equal(await onB.ids, b.id, 'reject heard');
      t.ok(seen.includes(a.id) && seen.includes(b.id), 'the first watcher heard both');
      t.equal(await codeOf(store.approve(a.id, 'alice')), 'APPROVAL_NOT_PENDING');
      stop();
      const c = await store.createApproval(pending());
      const onC = heard(store, (id) => id === c.id);
      await store.approve(c.id, 'alice');
      await onC.ids;
      t.notOk(seen.includes(c.id), 'unsubscribed: not called');
      onA.stop();
      onB.stop();
      onC.stop();
    });
  });
}

t.test('postgres: notices across store objects', { skip: pgSkip(), timeout: 60_000 }, async (t) => {
  const backend = BACKENDS.find((b) => b.name === 'postgres')!;

  /** Two store objects (two pools: two replicas) over one database. */
  async function pair(t: Parameters<typeof freshStore>[0]): Promise<[Store, Store, string]> {
    const { store: a, location } = await freshStore(t, backend);
    const b = await backend.open(t, location);
    return [a, b, location];
  }

  /** A watcher on `store`, subscribed now, that keeps what it hears. */
  function collector(store: Store): { seen: Set<string>; next(): Promise<void>; stop(): void } {
    const seen = new Set<string>();
    let wake = (): void => {};
    let tick = new Promise<void>((r) => (wake = r));
    const stop = store.watchApprovals((id) => {
      seen.add(id);
      wake();
      tick = new Promise<void>((r) => (wake = r));
    });
    return { seen, next: () => tick, stop };
  }

  /**
   * Decide approvals on `decider`, one at a time, until `heard` (subscribed before, so no
   * new watcher opens a listener meanwhile) has heard one of them. Returns which.
   */
  async function decideUntilHeard(
    heard: ReturnType<typeof collector>,
    decider: Store,
    how: 'approve' | 'reject',
  ): Promise<string | undefined> {
    const decided: string[] = [];
    const found = (): string | undefined => decided.find((id) => heard.seen.has(id));
    for (let i = 0; i < 100 && !found(); i++) {
      const x = await decider.createApproval(pending({ runId: `r${i}` }));
      decided.push(x.id);
      await (how === 'approve' ? decider.approve(x.id, 'alice') : decider.reject(x.id, 'bob'));
      // its notice may come after the decider returns: a moment for it before the next
      if (!found()) await Promise.race([heard.next(), new Promise((r) => setTimeout(r, 50))]);
    }
    return found();
  }

  t.test("approve and reject on B are heard by A's watcher", async (t) => {
    const [a, b] = await pair(t);
    const x = await b.createApproval(pending());
    const y = await b.createApproval(pending());
    const seen: string[] = [];
    const stop = a.watchApprovals((id) => seen.push(id));
    const onX = heard(a, (id) => id === x.id);
    // LISTEN takes a moment to be in place: decide until heard (the contract: notices sent
    // before the listener is up are lost), then check that a decision afterwards is heard.
    const warm = collector(a);
    t.ok(await decideUntilHeard(warm, b, 'approve'), 'A hears a decision made on B');
    warm.stop();
    await b.approve(x.id, 'alice');
    t.equal(await onX.ids, x.id, 'approve on B heard on A');
    const onY = heard(a, (id) => id === y.id);
    await b.reject(y.id, 'bob');
    t.equal(await onY.ids, y.id, 'reject on B heard on A');
    t.ok(seen.includes(x.id) && seen.includes(y.id));

    // a refused decision sends nothing: B's approve of x again fails, and a later decision
    // is the next thing A hears of these
    t.equal(await codeOf(b.approve(x.id, 'alice')), 'APPROVAL_NOT_PENDING');
    const z = await b.createApproval(pending());
    const after = seen.length;
    const onZ = heard(a, (id) => id === z.id);
    await b.approve(z.id, 'alice');
    await onZ.ids;
    t.same(seen.slice(after), [z.id], 'no notice for the refused decision');

    stop();
    const w = await b.createApproval(pending());
    const onW = heard(a, (id) => id === w.id);
    await b.approve(w.id, 'alice');
    await onW.ids;
    t.notOk(seen.includes(w.id), 'unsubscribed: not called');
    onX.stop();
    onY.stop();
    onZ.stop();
    onW.stop();
  });

  t.test('the listener reconnects after its connection is killed', async (t) => {
    const [a, b, location] = await pair(t);
    // one watcher throughout: a new subscription would open a listener of its own accord
    const watcher = collector(a);
    t.teardown(watcher.stop);
    t.ok(await decideUntilHeard(watcher, b, 'approve'), 'listening');
    const pids = (
      await sql(
        location,
        "SELECT pid FROM pg_stat_activity WHERE application_name = 'clibroker-listen' AND datname = current_database()",
      )
    ).map((r) => Number(r['pid']));
    t.equal(pids.length, 1, 'one listening connection for the watchers of a store object');
    const killed = await sql(location, 'SELECT pg_terminate_backend($1) AS ok', [pids[0]]);
    t.equal(killed[0]?.['ok'], true, 'the listener was killed');
    t.ok(await decideUntilHeard(watcher, b, 'reject'), 'a decision after the kill is heard: re-LISTENed');
    const now = (
      await sql(
        location,
        "SELECT pid FROM pg_stat_activity WHERE application_name = 'clibroker-listen' AND datname = current_database()",
      )
    ).map((r) => Number(r['pid']));
    t.equal(now.length, 1);
    t.not(now[0], pids[0], 'on a new connection');
  });

  t.test('no watcher, no listening connection; close ends it', async (t) => {
    const [a, , location] = await pair(t);
    const listeners = async (): Promise<number> =>
      (
        await sql(
          location,
          "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'clibroker-listen' AND datname = current_database()",
        )
      ).map((r) => Number(r['n']))[0]!;
    t.equal(await listeners(), 0);
    const stop = a.watchApprovals(() => {});
    for (let i = 0; i < 100 && (await listeners()) === 0; i++) await new Promise((r) => setTimeout(r, 20));
    t.equal(await listeners(), 1, 'a watcher opens it');
    stop();
    for (let i = 0; i < 100 && (await listeners()) === 1; i++) await new Promise((r) => setTimeout(r, 20));
    t.equal(await listeners(), 0, 'the last unsubscribe ends it');
    a.watchApprovals(() => {});
    for (let i = 0; i < 100 && (await listeners()) === 0; i++) await new Promise((r) => setTimeout(r, 20));
    await a.close();
    t.equal(await listeners(), 0, 'close ends it');
    t.equal(await codeOf(Promise.resolve().then(() => a.watchApprovals(() => {}))), 'STORE_CLOSED');
  });

  t.test(
    'ping against a stopped server rejects STORE_UNAVAILABLE without the reconnect window',
    async (t) => {
      const server = await startCluster();
      t.teardown(() => server.destroy());
      // a long reconnect window: ping must not wait it out
      const store = await openPostgresStore(server.urlOf('postgres'), {
        migrate: true,
        reconnectWindowMs: 60_000,
      });
      t.teardown(() => store.close());
      // a watcher too: close must end its retrying listener, with the server gone
      store.watchApprovals(() => {});
      t.equal(await codeOf(store.ping()), 'resolved');
      server.stop!('immediate');
      t.equal(await codeOf(store.ping()), 'STORE_UNAVAILABLE');
      t.equal(await codeOf(store.ping(300)), 'STORE_UNAVAILABLE');
      await store.close();
      t.equal(await codeOf(store.ping()), 'STORE_CLOSED');
    },
  );
});
