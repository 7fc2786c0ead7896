/**
 * Review sessions, on both backends: issued under bounds applied in the same transaction
 * (expired first, then the reviewer's oldest, then the oldest overall), seen and ended by
 * every store object over the database, touched forwards only, and bounded even when two
 * store objects (two replicas) issue at once.
 */
import t from 'tap';
import type { ReviewSessionBounds, ReviewSessionRecord } from '../../src/store/index.js';
import { BACKENDS, freshStore } from './fixtures/backends.js';
import { codeOf } from './fixtures/index.js';

const T0 = 5_000_000_000_000; // past 2^32 ms: the columns must hold more than 32 bits

const LOOSE: ReviewSessionBounds = { issuedAfter: 0, seenAfter: 0, perReviewer: 100, overall: 100 };

function session(id: string, who: string, at: number, lastSeen = at): ReviewSessionRecord {
  return { id, who, issuedAt: at, lastSeen };
}

async function ids(
  backend: { exec(l: string, q: string): Promise<Record<string, unknown>[]> },
  location: string,
) {
  return (await backend.exec(location, 'SELECT id FROM review_sessions ORDER BY id')).map((r) =>
    String(r['id']),
  );
}

for (const backend of BACKENDS) {
  t.test(backend.name, { skip: backend.skip }, async (t) => {
    t.test('put, get, touch and end; another store object sees each', async (t) => {
      const { store: a, location } = await freshStore(t, backend);
      const b = await backend.open(t, location);
      t.equal(await a.getReviewSession('s1'), undefined, 'never issued');
      await a.putReviewSession(session('s1', 'alice', T0), LOOSE);
      t.same(await b.getReviewSession('s1'), session('s1', 'alice', T0), 'B reads what A issued');
      await b.touchReviewSession('s1', T0 + 500);
      t.same(await a.getReviewSession('s1'), session('s1', 'alice', T0, T0 + 500), 'A sees B’s touch');
      await a.touchReviewSession('s1', T0 + 100);
      t.equal((await b.getReviewSession('s1'))?.lastSeen, T0 + 500, 'touch never moves lastSeen back');
      await a.touchReviewSession('nobody', T0);
      t.equal(await a.getReviewSession('nobody'), undefined, 'touching a gone session creates nothing');
      await a.endReviewSession('s1');
      t.equal(await b.getReviewSession('s1'), undefined, 'ended on A: gone for B');
      await a.endReviewSession('s1');
      await b.endReviewSession('s1');
      t.pass('end is idempotent');
    });

    t.test('touches racing from two store objects: the latest time wins', async (t) => {
      const { store: a, location } = await freshStore(t, backend);
      const b = await backend.open(t, location);
      await a.putReviewSession(session('s', 'alice', T0), LOOSE);
      const times = Array.from({ length: 40 }, (_, i) => T0 + ((i * 7919) % 40) * 1000);
      await Promise.all(times.map((at, i) => (i % 2 ? a : b).touchReviewSession('s', at)));
      t.equal((await a.getReviewSession('s'))?.lastSeen, Math.max(...times));
    });

    t.test('bounds: expired first, then the reviewer’s oldest, then the oldest overall', async (t) => {
      const { store, location } = await freshStore(t, backend);
      // expiry: issued too long ago, or idle too long
      await store.putReviewSession(session('old-issue', 'carol', T0 - 10_000, T0), LOOSE);
      await store.putReviewSession(session('idle', 'carol', T0, T0 - 5_000), LOOSE);
      await store.putReviewSession(session('fresh', 'carol', T0, T0), LOOSE);
      await store.putReviewSession(session('new', 'dave', T0 + 1), {
        ...LOOSE,
        issuedAfter: T0 - 1_000,
        seenAfter: T0 - 1_000,
      });
      t.same(await ids(backend, location), ['fresh', 'new'], 'the expired ones were ended');

      // perReviewer 3: alice's oldest go so that with the new one she has 3
      for (let i = 1; i <= 5; i++) await store.putReviewSession(session(`a${i}`, 'alice', T0 + i), LOOSE);
      await store.putReviewSession(session('a6', 'alice', T0 + 6), { ...LOOSE, perReviewer: 3 });
      t.same(
        (await ids(backend, location)).filter((id) => id.startsWith('a')),
        ['a4', 'a5', 'a6'],
        'alice keeps her newest 3, the new one included',
      );
      t.ok(await store.getReviewSession('fresh'), 'other reviewers untouched');

      // overall 4: the oldest of anyone go so that with the new one there are 4
      await store.putReviewSession(session('b1', 'bob', T0 + 10), { ...LOOSE, overall: 4 });
      t.same(await ids(backend, location), ['a4', 'a5', 'a6', 'b1'], 'the oldest overall were ended');

      // perReviewer 1: the new one replaces every other of the reviewer's
      await store.putReviewSession(session('b2', 'bob', T0 + 11), { ...LOOSE, perReviewer: 1 });
      t.same(await ids(backend, location), ['a4', 'a5', 'a6', 'b2']);

      // re-issuing an id replaces it (it is not counted against itself)
      await store.putReviewSession(session('b2', 'bob', T0 + 12), { ...LOOSE, perReviewer: 1, overall: 4 });
      t.same(await store.getReviewSession('b2'), session('b2', 'bob', T0 + 12));
      t.same(await ids(backend, location), ['a4', 'a5', 'a6', 'b2']);
    });

    t.test('two store objects × 20 concurrent puts for one reviewer, perReviewer 5: at most 5', async (t) => {
      const { store: a, location } = await freshStore(t, backend);
      const b = await backend.open(t, location);
      const bounds = { ...LOOSE, perReviewer: 5 };
      await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 ? a : b).putReviewSession(session(`c${String(i).padStart(2, '0')}`, 'erin', T0 + i), bounds),
        ),
      );
      const left = await ids(backend, location);
      t.ok(left.length <= 5, `${left.length} sessions left`);
      t.ok(left.length >= 1, 'the last one issued stays');
    });

    t.test('malformed input is STORE_INPUT_INVALID; a closed store STORE_CLOSED', async (t) => {
      const { store } = await freshStore(t, backend);
      const bad: [string, () => Promise<unknown>][] = [
        ['empty id', () => store.putReviewSession(session('', 'alice', T0), LOOSE)],
        ['long id', () => store.putReviewSession(session('x'.repeat(513), 'alice', T0), LOOSE)],
        ['no who', () => store.putReviewSession(session('s', '', T0), LOOSE)],
        ['NaN time', () => store.putReviewSession(session('s', 'alice', Number.NaN), LOOSE)],
        ['infinite seen', () => store.putReviewSession(session('s', 'alice', T0, Infinity), LOOSE)],
        [
          'perReviewer 0',
          () => store.putReviewSession(session('s', 'alice', T0), { ...LOOSE, perReviewer: 0 }),
        ],
        ['overall 1.5', () => store.putReviewSession(session('s', 'alice', T0), { ...LOOSE, overall: 1.5 })],
        [
          'NaN cutoff',
          () => store.putReviewSession(session('s', 'alice', T0), { ...LOOSE, seenAfter: Number.NaN }),
        ],
        ['get empty', () => store.getReviewSession('')],
        ['touch NaN', () => store.touchReviewSession('s', Number.NaN)],
        ['end non-string', () => store.endReviewSession(42 as never)],
      ];
      for (const [name, call] of bad) t.equal(await codeOf(call()), 'STORE_INPUT_INVALID', name);
      t.equal(await store.getReviewSession('s'), undefined, 'nothing was stored');
      await store.close();
      t.equal(await codeOf(store.putReviewSession(session('s', 'alice', T0), LOOSE)), 'STORE_CLOSED');
      t.equal(await codeOf(store.getReviewSession('s')), 'STORE_CLOSED');
    });
  });
}
