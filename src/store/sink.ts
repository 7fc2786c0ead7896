/**
 * Bridge from the engine's synchronous `onAudit` callback to the asynchronous store, so a
 * failed append is reported instead of becoming an unhandled rejection (egress
 * events go to the store and to pino; pino is the Auditor's job).
 */
import type { AuditEvent } from '../audit/types.js';
import type { Store } from './types.js';

/**
 * An `onAudit` callback that appends every egress event to `store`. `onError` hears about an
 * append that failed (log it); the data path is never blocked on the store.
 */
export function storeAuditSink(
  store: Store,
  onError: (err: unknown, event: AuditEvent) => void,
): (event: AuditEvent) => void {
  return (event) => {
    store.appendEvent(event).catch((err: unknown) => onError(err, event));
  };
}
