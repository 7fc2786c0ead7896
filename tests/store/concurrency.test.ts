import { Worker } from 'node:worker_threads';
import t from 'tap';
import { BACKENDS, freshStore } from './fixtures/backends.js';
import { codeOf, pending } from './fixtures/index.js';

const WORKERS = 4;
const DIGESTS = 25;
const ROUNDS = 3;

const digest = (i: number): string => i.toString(16).padStart(64, '0');

// Every case runs against each backend (a SQLite file, a PostgreSQL database).
for (const backend of BACKENDS) {
  t.test(backend.name, { skip: backend.skip }, async (t) => {
    t.test(
      'each approved digest is consumed exactly once by racing threads with their own connections',
      async (t) => {
        const { store, location: path } = await freshStore(t, backend);
        const ids = new Set<string>();
        for (let i = 0; i < DIGESTS; i++) {
          const a = await store.createApproval(pending({ digest: digest(i) }));
          await store.approve(a.id, 'alice');
          ids.add(a.id);
        }

        const barrier = new SharedArrayBuffer(8);
        const gate = new Int32Array(barrier);
        const results = Array.from({ length: WORKERS }, (_, n) => {
          // Each worker walks the digests from a different starting point, so they collide on
          // different rows at different moments. execArgv is emptied: the entry registers tsx
          // itself and tap's own hooks only slow a worker's start.
          const digests = Array.from({ length: DIGESTS }, (_, i) => digest((i + n * 7) % DIGESTS));
          const w = new Worker(new URL('./fixtures/consume-worker.mjs', import.meta.url), {
            execArgv: [],
            workerData: { path, runId: 'run-1', digests, rounds: ROUNDS, barrier },
          });
          return new Promise<{ won: string[]; errors: string[] }>((resolve, reject) => {
            w.once('message', resolve);
            w.once('error', reject);
          });
        });
        // Release them together once every worker has opened its connection.
        while (Atomics.load(gate, 0) < WORKERS) await new Promise((r) => setTimeout(r, 5));
        Atomics.store(gate, 1, 1);
        Atomics.notify(gate, 1);
        const out = await Promise.all(results);

        const won = out.flatMap((o) => o.won);
        t.same(
          out.flatMap((o) => o.errors),
          [],
          'no attempt failed (SQLite busy waits are absorbed by the busy timeout)',
        );
        t.equal(won.length, DIGESTS, `${WORKERS * DIGESTS * ROUNDS} attempts, ${DIGESTS} wins`);
        t.same(new Set(won), ids, 'every approval won once, by exactly one thread');
        t.equal((await store.listApprovals({ status: 'consumed' })).length, DIGESTS);
        t.equal((await store.listApprovals({ status: 'approved' })).length, 0);
      },
    );

    t.test('many concurrent consume calls over several connections: exactly one wins', async (t) => {
      const { store, location } = await freshStore(t, backend);
      const others = [await backend.open(t, location), await backend.open(t, location)];
      const a = await store.createApproval(pending());
      await store.approve(a.id, 'alice');
      const all = [store, ...others];
      const attempts = await Promise.all(
        Array.from({ length: 300 }, (_, i) => all[i % all.length]!.consumeApproved(a.digest, 'run-1')),
      );
      t.equal(attempts.filter((x) => x !== undefined).length, 1);
      t.equal((await others[1]!.getApproval(a.id))?.status, 'consumed');
    });

    t.test('racing approve and reject on one pending approval: one decision stands', async (t) => {
      const { store, location } = await freshStore(t, backend);
      const other = await backend.open(t, location);
      const a = await store.createApproval(pending());
      const codes = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          codeOf(i % 2 ? store.approve(a.id, 'alice') : other.reject(a.id, 'bob')),
        ),
      );
      t.equal(codes.filter((c) => c === 'resolved').length, 1, 'one winner');
      t.equal(codes.filter((c) => c === 'APPROVAL_NOT_PENDING').length, 39, 'the rest refused');
      if (backend.name === 'sqlite')
        t.equal((await store.getApproval(a.id))?.status, 'rejected', 'the first call (a reject) won');
      else
        t.ok(
          ['approved', 'rejected'].includes((await store.getApproval(a.id))?.status ?? ''),
          'one of them won (a pool does not keep call order)',
        );
    });

    t.test('20 stores, as 20 brokers, race to consume one approval: exactly one wins', async (t) => {
      const { store, location } = await freshStore(t, backend);
      const brokers = await Promise.all(Array.from({ length: 20 }, () => backend.open(t, location)));
      const a = await store.createApproval(pending());
      await store.approve(a.id, 'alice');
      const got = await Promise.all(brokers.map((b) => b.consumeApproved(a.digest, 'run-1')));
      t.same(
        got.filter((x) => x !== undefined).map((x) => x!.id),
        [a.id],
        'one winner, the others got nothing',
      );
      t.equal((await brokers[7]!.getApproval(a.id))?.status, 'consumed');
      t.equal(
        await codeOf(brokers[3]!.approve(a.id, 'bob')),
        'APPROVAL_NOT_PENDING',
        'and it cannot be approved again anywhere',
      );
    });
  });
}
