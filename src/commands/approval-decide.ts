/**
 * A person's decision on an approval (`approvals approve|reject`), with the store's catalogue
 * errors turned into envelopes that name the approval's state.
 *
 * Loaded only by a command's `run` (a dynamic import), like every back-end of the bundled
 * commands: `--help` never pays for the broker, the runner, the store or SQLite.
 */
import { BrokerError, errorMessage } from '../errors.js';
import type { Store } from '../store/types.js';
import { echo, fail } from '../cli/envelope.js';

/** APPROVAL_NOT_FOUND as a runtime envelope that says where to look. */
export function approvalNotFound(id: string, flag: string): never {
  return fail('runtime', errorMessage('APPROVAL_NOT_FOUND', { id: echo(id, 60), where: 'store' }), {
    code: 'APPROVAL_NOT_FOUND',
    flag,
    got: id,
    hint: 'list them with clibroker approvals list --status pending (and check --store)',
  });
}

/** A person approves or rejects; the store's catalogue errors get messages that name the state. */
export async function decideApproval(store: Store, id: string, to: 'approve' | 'reject', who: string) {
  try {
    return to === 'approve' ? await store.approve(id, who) : await store.reject(id, who);
  } catch (e) {
    if (e instanceof BrokerError && e.code === 'APPROVAL_NOT_FOUND') approvalNotFound(id, 'id');
    if (e instanceof BrokerError && e.code === 'APPROVAL_NOT_PENDING') {
      const status = String(e.details?.['status'] ?? 'decided');
      fail('runtime', errorMessage('APPROVAL_NOT_PENDING', { id: echo(id, 60), status, to }), {
        code: 'APPROVAL_NOT_PENDING',
        flag: 'id',
        got: id,
        hint:
          status === 'rejected'
            ? 'a rejected approval can never be approved; run the command again to ask anew'
            : `see it with clibroker approvals show --id ${echo(id, 60)}`,
      });
    }
    throw e;
  }
}
