/**
 * The hold on a pending approval, on both backends: a server whose call waits for it records
 * until when (a lease), every store object over the same database reads it, and it is ended
 * by `null` or by the decision. Only a pending approval is held.
 */
import t from 'tap';
import { BACKENDS, freshStore } from './fixtures/backends.js';
import { codeOf, pending } from './fixtures/index.js';

for (const backend of BACKENDS) {
  t.test(backend.name, { skip: backend.skip }, async (t) => {
    t.test('a hold is recorded, read by another store object, and ended', async (t) => {
      const { store, location } = await freshStore(t, backend);
      const other = await backend.open(t, location);
      const a = await store.createApproval(pending());
      t.equal(a.heldUntil, undefined, 'a new approval is held by nobody');
      const until = '2030-01-01T00:00:00.000Z';
      await store.holdApproval(a.id, until);
      t.equal((await other.getApproval(a.id))?.heldUntil, until, 'another server over the store sees it');
      t.equal((await other.listApprovals({ status: 'pending' }))[0]?.heldUntil, until, 'in lists too');
      await store.holdApproval(a.id, '2030-01-01T01:00:00+01:00');
      t.equal((await other.getApproval(a.id))?.heldUntil, until, 'renewed, stored in UTC');
      await store.holdApproval(a.id, null);
      t.equal((await other.getApproval(a.id))?.heldUntil, undefined, 'ended');
    });

    t.test('only a pending approval is held; a bad time is refused', async (t) => {
      const { store } = await freshStore(t, backend);
      const a = await store.createApproval(pending());
      await store.holdApproval(a.id, '2030-01-01T00:00:00.000Z');
      const approved = await store.approve(a.id, 'alice');
      t.equal(approved.heldUntil, '2030-01-01T00:00:00.000Z', 'the decision keeps the last lease');
      await store.holdApproval(a.id, '2031-01-01T00:00:00.000Z');
      await store.holdApproval(a.id, null);
      t.equal(
        (await store.getApproval(a.id))?.heldUntil,
        '2030-01-01T00:00:00.000Z',
        'a decided approval is not held again, nor released',
      );
      t.equal(await codeOf(store.holdApproval(a.id, 'not a time')), 'STORE_INPUT_INVALID');
      t.equal(
        await codeOf(store.holdApproval('no-such-id', null)),
        'resolved',
        'an unknown id changes nothing',
      );
    });
  });
}
