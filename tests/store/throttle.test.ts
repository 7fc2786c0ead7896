/**
 * The serve throttle's counters, on both backends: read, read-modify-write serialised per
 * key across store objects (two replicas), stale counters forgotten in the same
 * transaction, what the callback returns checked, and what it throws passed through.
 */
import t from 'tap';
import type { ThrottleCounter } from '../../src/store/index.js';
import { BACKENDS, freshStore } from './fixtures/backends.js';
import { codeOf } from './fixtures/index.js';

const T0 = 5_000_000_000_000; // past 2^32 ms: the columns must hold more than 32 bits

function counter(over: Partial<ThrottleCounter> = {}): ThrottleCounter {
  return { windowStart: T0, failures: 0, last: T0, lockedUntil: 0, strikes: 0, ...over };
}

/** The update serve makes on a failed guess: one more failure under each key. */
function fail(keys: readonly string[], at: number) {
  return (current: Map<string, ThrottleCounter>): Map<string, ThrottleCounter> => {
    const out = new Map<string, ThrottleCounter>();
    for (const k of keys) {
      const c = current.get(k) ?? counter({ windowStart: at, last: at });
      out.set(k, { ...c, failures: c.failures + 1, last: Math.max(c.last, at) });
    }
    return out;
  };
}

for (const backend of BACKENDS) {
  t.test(backend.name, { skip: backend.skip }, async (t) => {
    t.test('absent keys are missing; an update stores and returns the counters', async (t) => {
      const { store, location } = await freshStore(t, backend);
      const other = await backend.open(t, location);
      t.same(await store.throttleCounters(['10.0.0.1', '*']), new Map(), 'nothing yet');
      let given: Map<string, ThrottleCounter> | undefined;
      const stored = await store.updateThrottle(
        ['10.0.0.1', '*', '10.0.0.1'],
        (current) => {
          given = current;
          return new Map([
            ['10.0.0.1', counter({ failures: 1, lockedUntil: T0 + 2 ** 33, strikes: 2 })],
            ['*', counter({ failures: 1 })],
          ]);
        },
        0,
      );
      t.same(given, new Map(), 'fn saw no counters');
      const want = new Map([
        ['10.0.0.1', counter({ failures: 1, lockedUntil: T0 + 2 ** 33, strikes: 2 })],
        ['*', counter({ failures: 1 })],
      ]);
      t.same(stored, want, 'resolves to what is stored');
      t.same(await other.throttleCounters(['*', '10.0.0.1', 'nope']), want, 'another store object reads it');
      t.equal(
        typeof (await other.throttleCounters(['*'])).get('*')?.windowStart,
        'number',
        'numbers, not strings',
      );

      // a key the callback leaves out is left as it is
      const second = await other.updateThrottle(
        ['10.0.0.1', '*'],
        () => new Map([['*', counter({ failures: 9 })]]),
        0,
      );
      t.same(second.get('10.0.0.1'), want.get('10.0.0.1'));
      t.equal(second.get('*')?.failures, 9);
    });

    t.test('two store objects × 50 concurrent increments of one key: exactly 100', async (t) => {
      const { store: a, location } = await freshStore(t, backend);
      const b = await backend.open(t, location);
      const keys = ['10.0.0.7', '*'];
      await Promise.all(
        Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).updateThrottle(keys, fail(keys, T0 + i), 0)),
      );
      const got = await a.throttleCounters(keys);
      t.equal(got.get('10.0.0.7')?.failures, 100, 'no increment lost');
      t.equal(got.get('*')?.failures, 100, 'no increment lost on the overall key');
      t.equal(got.get('*')?.last, T0 + 99);
    });

    t.test('counters idle since before forgetBefore are deleted in the same update', async (t) => {
      const { store } = await freshStore(t, backend);
      const put = (key: string, c: ThrottleCounter) =>
        store.updateThrottle([key], () => new Map([[key, c]]), 0);
      await put('stale', counter({ last: T0 - 10_000, lockedUntil: T0 - 5_000 }));
      await put('locked', counter({ last: T0 - 10_000, lockedUntil: T0 + 60_000 }));
      await put('recent', counter({ last: T0 - 10 }));
      const out = await store.updateThrottle(['*'], fail(['*'], T0), T0 - 1_000);
      t.same([...out.keys()], ['*']);
      t.same(
        [...(await store.throttleCounters(['stale', 'locked', 'recent', '*'])).keys()],
        ['locked', 'recent', '*'],
        'the stale counter went; one still locked out and a recent one stay',
      );
      // the update's own counters are forgotten too when what fn returns is stale
      const gone = await store.updateThrottle(['old'], () => new Map([['old', counter({ last: 1 })]]), T0);
      t.same(gone, new Map(), 'stored and forgotten in one go: not in the result');
      t.same([...(await store.throttleCounters(['locked', 'recent'])).keys()], ['locked'], 'recent went');
    });

    t.test('what fn throws is rethrown and nothing is written; bad output is refused', async (t) => {
      const { store } = await freshStore(t, backend);
      await store.updateThrottle(['k'], () => new Map([['k', counter({ failures: 1 })]]), 0);
      const boom = new Error('fn failed');
      await t.rejects(
        store.updateThrottle(
          ['k'],
          () => {
            throw boom;
          },
          T0 * 2,
        ),
        boom,
        'the callback’s own error',
      );
      t.equal((await store.throttleCounters(['k'])).get('k')?.failures, 1, 'rolled back: not forgotten');
      const bad: [string, () => Promise<unknown>][] = [
        ['a key not given', () => store.updateThrottle(['k'], () => new Map([['x', counter()]]), 0)],
        ['not a Map', () => store.updateThrottle(['k'], () => ({}) as never, 0)],
        [
          'NaN field',
          () => store.updateThrottle(['k'], () => new Map([['k', counter({ failures: Number.NaN })]]), 0),
        ],
        [
          'missing field',
          () => store.updateThrottle(['k'], () => new Map([['k', { failures: 1 } as never]]), 0),
        ],
        ['NaN forgetBefore', () => store.updateThrottle(['k'], () => new Map(), Number.NaN)],
        ['empty key', () => store.updateThrottle([''], () => new Map(), 0)],
        ['keys not an array', () => store.throttleCounters('k' as never)],
        ['long key', () => store.throttleCounters(['k'.repeat(600)])],
      ];
      for (const [name, call] of bad) t.equal(await codeOf(call()), 'STORE_INPUT_INVALID', name);
      t.equal((await store.throttleCounters(['k'])).get('k')?.failures, 1, 'still as it was');
      await store.close();
      t.equal(await codeOf(store.throttleCounters(['k'])), 'STORE_CLOSED');
      t.equal(await codeOf(store.updateThrottle(['k'], () => new Map(), 0)), 'STORE_CLOSED');
    });
  });
}
