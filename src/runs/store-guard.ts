/**
 * No egress without its record: what the runner does when the store cannot write.
 *
 *   a call's audit write fails ─▶ its gate, and the gate of every other call running, refuse
 *     every later request (before forwarding)
 *   ─▶ the call fails with the store's code and the count of events lost
 *   ─▶ the breaker opens: the next call first writes the execution events still unstored
 *      (the probe); it is refused with the store's code while that fails, and goes ahead
 *      once it succeeds — no restart
 *
 * The allowed request pays one boolean check in the gate; the store is touched only after a
 * failure, once per call.
 */
import type { Logger } from 'pino';
import type { Decision } from '../broker/types.js';
import { BrokerError, errorMessage, isBrokerError } from '../errors.js';
import type { ExecutionEvent, Store } from '../store/types.js';

/** What a failed store write is called: a lost PostgreSQL connection, or any other failed write. */
export type StoreFailureCode = 'STORE_WRITE_FAILED' | 'STORE_UNAVAILABLE';

export function storeFailureCode(err: unknown): StoreFailureCode {
  return isBrokerError(err) && err.code === 'STORE_UNAVAILABLE' ? 'STORE_UNAVAILABLE' : 'STORE_WRITE_FAILED';
}

/** The catalogue's words for `what` failing, from the data the store's error carries. */
function failureMessage(err: unknown, what: string): string {
  if (storeFailureCode(err) === 'STORE_UNAVAILABLE') {
    const details = (err as BrokerError).details;
    return errorMessage('STORE_UNAVAILABLE', {
      what,
      why: details?.['inFlight'] === true ? 'the connection broke during a write' : 'it cannot be reached',
    });
  }
  const e = err as { cause?: unknown; message?: unknown };
  const cause = e?.cause instanceof Error ? e.cause.message : typeof e?.message === 'string' ? e.message : '';
  return errorMessage('STORE_WRITE_FAILED', { what, cause: cause || String(err) });
}

/**
 * The gate's answer to every request after a write failed — of its own call, or of another
 * call over the same store: a 4xx refusal naming the store's code.
 */
export function lostRecordRefusal(err: unknown, whose: 'this call' | 'another call'): Decision {
  return {
    decision: 'deny',
    code: 'POLICY_BLOCKED',
    policyCode: storeFailureCode(err),
    reason: failureMessage(
      err,
      `an earlier request of ${whose} could not be recorded, so no further request is sent`,
    ),
  };
}

/** A call some of whose events were not stored: it fails with the store's code, the count in details. */
export function lostEventsError(err: unknown, lost: number, details: Record<string, unknown>): BrokerError {
  const what = `${lost} audit event${lost === 1 ? ' of this call was' : 's of this call were'} not stored`;
  return new BrokerError(storeFailureCode(err), {
    message: failureMessage(err, what),
    cause: err,
    details: { lostEvents: lost, ...details },
  });
}

/** Execution events kept for the probe at most; older ones beyond it are logged and dropped. */
const KEPT_MAX = 1_000;

/** The runner's circuit breaker over its store's writes. */
export interface StoreBreaker {
  /** a write failed: calls wait for a probe from now on */
  failed(err: unknown): void;
  /** a write succeeded: the store writes again */
  wrote(): void;
  /** an execution event that could not be stored: the probe writes it */
  keep(event: ExecutionEvent): void;
  /**
   * Before a call starts: nothing while no write failed; else the probe (one at a time).
   * @throws BrokerError STORE_WRITE_FAILED or STORE_UNAVAILABLE while the store still fails
   */
  check(): Promise<void>;
}

/**
 * The probe is a write, not a read: a full disk or a read-only file still answers reads. It
 * writes what is owed anyway — the execution events of the calls that failed (theirs were not
 * stored either), oldest first — so a recovered store also gets the record of the failure.
 * With nothing owed (a call starting while another call's write has just failed), the call is
 * refused until a write succeeds again.
 */
export function createStoreBreaker(store: Store, logger?: Logger): StoreBreaker {
  let last: unknown;
  const owed: ExecutionEvent[] = [];
  let probing: Promise<void> | undefined;

  const refused = (err: unknown): BrokerError =>
    new BrokerError(storeFailureCode(err), {
      message: failureMessage(err, 'the store cannot write, so no call is started'),
      cause: err,
    });

  async function probe(): Promise<void> {
    if (owed.length === 0) throw refused(last);
    while (owed.length > 0) {
      try {
        await store.appendEvent(owed[0]!);
      } catch (err) {
        last = err;
        throw refused(err);
      }
      owed.shift();
    }
    last = undefined;
  }

  return {
    failed(err) {
      last = err;
    },
    wrote() {
      if (owed.length === 0) last = undefined;
    },
    keep(event) {
      if (owed.length >= KEPT_MAX) {
        const dropped = owed.shift()!;
        logger?.error(
          { runId: dropped.runId },
          'clibroker: execution event dropped while the store cannot write',
        );
      }
      owed.push(event);
    },
    async check() {
      if (last === undefined) return;
      probing ??= probe().finally(() => {
        probing = undefined;
      });
      await probing;
    },
  };
}
