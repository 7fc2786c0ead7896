/**
 * The serve throttle over a store reads an address's counters at most once per `readCacheMs`:
 * a client making many requests (with a good token, or flooding) costs the store one read a
 * second, not one a request. What that read found answers only for that long; a failure on
 * this server drops it at once (the next check sees the count just written), concurrent
 * checks share one read, a failed read is not kept, and a lock-out another replica starts is
 * honoured once the read is older than `readCacheMs`. The store is a real SQLite store; the
 * count of reads is taken at its `throttleCounters`.
 */
import t from 'tap';
import { THROTTLE_LIMITS, Throttle } from '../../src/serve/throttle.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/types.js';

type Counters = Pick<Store, 'throttleCounters' | 'updateThrottle'>;

/** The store's throttle methods, its reads counted; `failNext` makes the next read reject. */
function counted(store: Store): Counters & { reads: number; failNext: boolean } {
  const c = {
    reads: 0,
    failNext: false,
    throttleCounters: (keys: readonly string[]) => {
      c.reads++;
      if (c.failNext) {
        c.failNext = false;
        return Promise.reject(new Error('the store cannot be read'));
      }
      return store.throttleCounters(keys);
    },
    updateThrottle: store.updateThrottle.bind(store),
  };
  return c;
}

function setup(t: { teardown(fn: () => unknown): void }) {
  const store = openSqliteStore(':memory:');
  t.teardown(() => store.close());
  const clock = { now: 1_000_000 };
  const limits = {
    ...THROTTLE_LIMITS,
    perAddress: 2,
    overall: 1000,
    windowMs: 60_000,
    lockMs: 60_000,
    readCacheMs: 1000,
    now: () => clock.now,
  };
  return { store, clock, limits };
}

t.test('many checks within readCacheMs: one read; after it, one more', async (t) => {
  const { store, clock, limits } = setup(t);
  const c = counted(store);
  const th = new Throttle(limits, c);
  for (let i = 0; i < 50; i++) t.equal(await th.wait('10.0.0.1'), undefined);
  t.equal(c.reads, 1, 'fifty checks, one read');
  await Promise.all(Array.from({ length: 20 }, () => th.wait('10.0.0.2')));
  t.equal(c.reads, 2, 'twenty concurrent checks of another address share one read');
  clock.now += 999;
  await th.wait('10.0.0.1');
  t.equal(c.reads, 2, 'still within readCacheMs');
  clock.now += 1;
  await th.wait('10.0.0.1');
  t.equal(c.reads, 3, 'read again once it is readCacheMs old');
});

t.test('a failure here drops the read: the next check sees the lock-out at once', async (t) => {
  const { store, limits } = setup(t);
  const c = counted(store);
  const th = new Throttle(limits, c);
  t.equal(await th.wait('10.0.0.1'), undefined);
  t.same(await th.failure('10.0.0.1'), []);
  t.equal(await th.wait('10.0.0.1'), undefined);
  t.same(await th.failure('10.0.0.1'), [{ scope: 'address', seconds: 60 }]);
  t.match(await th.wait('10.0.0.1'), { scope: 'address' }, 'locked out on the very next check');
});

t.test('a failed read is not kept', async (t) => {
  const { store, limits } = setup(t);
  const c = counted(store);
  const th = new Throttle(limits, c);
  c.failNext = true;
  await t.rejects(th.wait('10.0.0.1'), /cannot be read/);
  t.equal(await th.wait('10.0.0.1'), undefined, 'the next check reads again');
  t.equal(c.reads, 2);
});

t.test("another replica's lock-out: honoured once this replica's read is readCacheMs old", async (t) => {
  const { store, clock, limits } = setup(t);
  const a = new Throttle(limits, store);
  const b = new Throttle(limits, store);
  t.equal(await b.wait('10.0.0.1'), undefined, 'b reads: not locked');
  await a.failure('10.0.0.1');
  t.same(await a.failure('10.0.0.1'), [{ scope: 'address', seconds: 60 }], 'a locks the address out');
  t.equal(await b.wait('10.0.0.1'), undefined, 'within readCacheMs b still answers from its read');
  clock.now += 1000;
  t.match(await b.wait('10.0.0.1'), { scope: 'address' }, 'then b refuses it too');
  t.equal(await b.wait('10.0.0.3'), undefined, 'an address b never read is read at once');
});

t.test('without readCacheMs every check reads', async (t) => {
  const { store, limits } = setup(t);
  const c = counted(store);
  const th = new Throttle({ ...limits, readCacheMs: 0 }, c);
  for (let i = 0; i < 5; i++) await th.wait('10.0.0.1');
  t.equal(c.reads, 5);
});
