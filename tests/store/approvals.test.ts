import t from 'tap';
import type { Approval, Store } from '../../src/store/index.js';
import { BACKENDS, freshStore } from './fixtures/backends.js';
import { codeOf, DIGEST_A, DIGEST_B, pending } from './fixtures/index.js';

// Every case runs against each backend (a SQLite file, a PostgreSQL database).
for (const backend of BACKENDS) {
  t.test(backend.name, { skip: backend.skip }, async (t) => {
    /** The clock's first reading goes to the migration ledger, so records start at 00:00:01. */
    async function memStore(t: { teardown(fn: () => unknown): void }): Promise<Store> {
      return (await freshStore(t, backend)).store;
    }

    t.test('a pending approval records everything a reviewer sees', async (t) => {
      const store = await memStore(t);
      const input = pending({
        method: 'POST',
        path: '/graphql',
        graphqlOperation: 'DeleteRepo',
        bodyPreview: '{"query":"mutation DeleteRepo…"}',
        toolArgs: { args: ['api', 'graphql'], nested: { n: 1 } },
      });
      const a = await store.createApproval(input);
      t.match(a, { ...input, status: 'pending', createdAt: '2030-01-01T00:00:01.000Z' });
      t.notOk('decidedAt' in a || 'consumedAt' in a, 'no decision yet');
      t.same(await store.getApproval(a.id), a, 'reads back identically');
      t.equal(await store.getApproval('nope'), undefined);
    });

    // From a status, an action: the resulting status, or the refusal's code.
    type Action = 'approve' | 'reject' | 'consume';
    const transitions: Record<string, [setup: Action[], action: Action, want: string]> = {
      'pending → approved': [[], 'approve', 'approved'],
      'pending → rejected': [[], 'reject', 'rejected'],
      'pending cannot be consumed': [[], 'consume', 'pending'],
      'approved → consumed': [['approve'], 'consume', 'consumed'],
      'a rejected approval can never be approved': [['reject'], 'approve', 'APPROVAL_NOT_PENDING'],
      'a rejected approval cannot be rejected again': [['reject'], 'reject', 'APPROVAL_NOT_PENDING'],
      'a rejected approval cannot be consumed': [['reject'], 'consume', 'rejected'],
      'an approved approval cannot be rejected': [['approve'], 'reject', 'APPROVAL_NOT_PENDING'],
      'an approved approval cannot be approved twice': [['approve'], 'approve', 'APPROVAL_NOT_PENDING'],
      'a consumed approval cannot be approved again': [
        ['approve', 'consume'],
        'approve',
        'APPROVAL_NOT_PENDING',
      ],
      'a consumed approval cannot be consumed again': [['approve', 'consume'], 'consume', 'consumed'],
    };

    t.test('status transitions', async (t) => {
      t.plan(Object.keys(transitions).length);
      for (const [name, [setup, action, want]] of Object.entries(transitions)) {
        await t.test(name, async (t) => {
          const store = await memStore(t);
          const a = await store.createApproval(pending());
          const act = async (x: Action): Promise<Approval | undefined> =>
            x === 'approve'
              ? store.approve(a.id, 'alice')
              : x === 'reject'
                ? store.reject(a.id, 'alice')
                : store.consumeApproved(a.digest, a.runId);
          for (const s of setup) await act(s);
          const before = await store.getApproval(a.id);
          const code = await codeOf(act(action));
          const after = await store.getApproval(a.id);
          if (want.includes('_')) {
            t.equal(code, want);
            t.same(after, before, 'a refused action changes nothing');
          } else {
            t.equal(code, 'resolved');
            t.equal(after?.status, want);
          }
        });
      }
    });

    t.test('approve and reject record who and when; consume records when', async (t) => {
      const store = await memStore(t);
      const a = await store.createApproval(pending());
      const ok = await store.approve(a.id, 'alice');
      t.match(ok, { status: 'approved', decidedBy: 'alice', decidedAt: '2030-01-01T00:00:02.000Z' });
      const used = await store.consumeApproved(DIGEST_A, 'run-1');
      t.match(used, {
        id: a.id,
        status: 'consumed',
        decidedBy: 'alice',
        consumedAt: '2030-01-01T00:00:03.000Z',
      });
      const b = await store.createApproval(pending());
      t.match(await store.reject(b.id, 'bob'), { status: 'rejected', decidedBy: 'bob' });
      t.equal(await codeOf(store.approve('no-such-id', 'alice')), 'APPROVAL_NOT_FOUND');
      t.equal(await codeOf(store.approve(b.id, '')), 'STORE_INPUT_INVALID', 'who is required');
    });

    t.test('reject then approve is refused, and the digest never becomes consumable', async (t) => {
      const store = await memStore(t);
      const a = await store.createApproval(pending());
      await store.reject(a.id, 'alice');
      const err = await store.approve(a.id, 'mallory').catch((e: unknown) => e);
      t.match(err, { code: 'APPROVAL_NOT_PENDING', details: { status: 'rejected', wanted: 'approved' } });
      t.equal(await store.consumeApproved(DIGEST_A, 'run-1'), undefined);
      t.match(await store.getApproval(a.id), { status: 'rejected', decidedBy: 'alice' });
    });

    t.test('the schema itself refuses a backwards transition, whoever issues it', async (t) => {
      const { store, location } = await freshStore(t, backend);
      const a = await store.createApproval(pending());
      await store.reject(a.id, 'alice');
      await t.rejects(
        backend.exec(location, "UPDATE approvals SET status = 'approved' WHERE id = $1", [a.id]),
        /transition not allowed/,
      );
      t.equal((await store.getApproval(a.id))?.status, 'rejected');
    });

    t.test('releaseApproval gives a consumed approval back, and only a consumed one', async (t) => {
      const store = await memStore(t);
      const a = await store.createApproval(pending());
      t.equal(await store.releaseApproval(a.id), undefined, 'a pending one is not released');
      await store.approve(a.id, 'alice');
      t.equal(await store.releaseApproval(a.id), undefined, 'nor an approved one');
      await store.consumeApproved(DIGEST_A, 'run-1');
      const back = await store.releaseApproval(a.id);
      t.match(back, { id: a.id, status: 'approved', decidedBy: 'alice' });
      t.notOk(back && 'consumedAt' in back, 'consumedAt is cleared');
      t.equal((await store.consumeApproved(DIGEST_A, 'run-1'))?.id, a.id, 'consumable again');
      const b = await store.createApproval(pending());
      await store.reject(b.id, 'bob');
      t.equal(await store.releaseApproval(b.id), undefined, 'a rejected one stays rejected');
      t.equal((await store.getApproval(b.id))?.status, 'rejected');
    });

    t.test('consumeApproved matches digest and run, oldest first, once each', async (t) => {
      const store = await memStore(t);
      const first = await store.createApproval(pending());
      const second = await store.createApproval(pending());
      const other = await store.createApproval(pending({ digest: DIGEST_B }));
      const elsewhere = await store.createApproval(pending({ runId: 'run-2' }));
      for (const a of [first, second, other, elsewhere]) await store.approve(a.id, 'alice');

      t.equal(await store.consumeApproved(DIGEST_A, 'run-3'), undefined, 'another run gets nothing');
      t.equal((await store.consumeApproved(DIGEST_A, 'run-1'))?.id, first.id, 'oldest first');
      t.equal((await store.consumeApproved(DIGEST_A, 'run-1'))?.id, second.id, 'then the next');
      t.equal(await store.consumeApproved(DIGEST_A, 'run-1'), undefined, 'then none');
      t.equal((await store.getApproval(other.id))?.status, 'approved', 'a different digest is untouched');
      t.equal(
        (await store.getApproval(elsewhere.id))?.status,
        'approved',
        "another run's approval is untouched",
      );
      t.equal(await codeOf(store.consumeApproved('ABC', 'run-1')), 'STORE_INPUT_INVALID');
    });

    t.test('listApprovals by status and run, ordered and limited', async (t) => {
      const store = await memStore(t);
      const ids: string[] = [];
      for (const [runId, digest] of [
        ['run-1', DIGEST_A],
        ['run-1', DIGEST_B],
        ['run-2', DIGEST_A],
      ] as const) {
        ids.push((await store.createApproval(pending({ runId, digest }))).id);
      }
      await store.approve(ids[1]!, 'alice');
      const cases: Record<string, [Parameters<Store['listApprovals']>[0], string[]]> = {
        'everything, oldest first': [{}, ids],
        'newest first': [{ order: 'newest' }, [...ids].reverse()],
        pending: [{ status: 'pending' }, [ids[0]!, ids[2]!]],
        'pending in run-1': [{ status: 'pending', runId: 'run-1' }, [ids[0]!]],
        'run-1': [{ runId: 'run-1' }, [ids[0]!, ids[1]!]],
        approved: [{ status: 'approved' }, [ids[1]!]],
        'limit 1, newest': [{ limit: 1, order: 'newest' }, [ids[2]!]],
        rejected: [{ status: 'rejected' }, []],
      };
      for (const [name, [q, want]] of Object.entries(cases)) {
        t.same(
          (await store.listApprovals(q)).map((a) => a.id),
          want,
          name,
        );
      }
      t.equal(await codeOf(store.listApprovals({ limit: 0 })), 'STORE_INPUT_INVALID');
    });

    t.test('bad approval input is refused and nothing is recorded', async (t) => {
      const store = await memStore(t);
      const cyclic: Record<string, unknown> = {};
      cyclic['self'] = cyclic;
      const bad: Record<string, Parameters<Store['createApproval']>[0]> = {
        'upper-case digest': pending({ digest: 'A'.repeat(64) }),
        'short digest': pending({ digest: 'a'.repeat(63) }),
        'empty run id': pending({ runId: '' }),
        'tool args not JSON': pending({ toolArgs: cyclic }),
        'tool args absent': pending({ toolArgs: undefined }),
      };
      for (const [name, input] of Object.entries(bad))
        t.equal(await codeOf(store.createApproval(input)), 'STORE_INPUT_INVALID', name);
      t.same(await store.listApprovals(), []);
    });
  });
}
