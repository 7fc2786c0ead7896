/**
 * The per-call bound on refusal events. A refusal the child can repeat at no cost to itself
 * (a child-side code: requests past the budget, tunnels past the cap, head and handshake
 * timeouts, plain HTTP, upgrades, bad heads) is its own event only while its code has had
 * fewer than {@link FOLD_PER_CODE} and the session fewer than {@link FOLD_TOTAL}; past that it
 * is counted here, and the session's close writes one summary event per code (exchange.ts).
 *
 * The first refusal of a code is always its own event, past the total too: the call's
 * outcome is its first refusal that weighs as a decision, and weight follows the code, so
 * the event that decides a call is never the one folded. Policy decisions (tier, egress,
 * confirmations) and upstream failures are never folded: the request budget bounds them,
 * and each is a decision about one request a reviewer may need.
 *
 * Counters only: nothing here runs for an allowed request but `audited++`.
 */
import { CATALOGUE, isErrorCode } from '../errors.js';
import type { AuditEvent } from './types.js';

/** What the fold reads of a refused request: whether it reached the vendor, its bytes, its start. */
export interface FoldedRequest {
  readonly start: number;
  readonly started: boolean;
  readonly bytesUp: number;
  readonly bytesDown: number;
}

/** Refusal events of one code a call writes one by one before the rest are folded. */
export const FOLD_PER_CODE = 8;
/** Child-side refusal events a call writes one by one, all codes together, before folding. */
export const FOLD_TOTAL = 64;

/** The refusals of one code not written one by one. */
export interface FoldCount {
  /** events of this code written one by one */
  emitted: number;
  /** refusals counted here instead */
  folded: number;
  /** the event of the first refusal folded: its method, host, path and reason stand for the rest */
  first?: AuditEvent;
  firstSeen: number;
  lastSeen: number;
  bytesUp: number;
  bytesDown: number;
  durationMs: number;
}

/** One session's counters, carried on the session. */
export class RefusalFold {
  /** exchanges audited so far, every kind: with `stats.requests`, tells when the last one is in */
  audited = 0;
  /** the summaries were written; refusals after that are written one by one */
  flushed = false;
  /** child-side refusal events written one by one */
  #emitted = 0;
  readonly #codes = new Map<string, FoldCount>();
  /** a timer that writes the summaries if some request is never audited after the close */
  timer: NodeJS.Timeout | undefined;

  /**
   * Whether this refusal is folded (counted, no event of its own). Only refusals that never
   * reached the vendor, carry no policy code, and whose code the catalogue puts on the child.
   * `event` builds the refusal's event, kept when it is the first of its code folded.
   */
  fold(x: FoldedRequest, code: string, policyCode: string | undefined, event: () => AuditEvent): boolean {
    if (this.flushed || x.started || policyCode !== undefined) return false;
    if (!isErrorCode(code) || CATALOGUE[code].side !== 'child') return false;
    let c = this.#codes.get(code);
    if (c === undefined) {
      c = { emitted: 0, folded: 0, firstSeen: 0, lastSeen: 0, bytesUp: 0, bytesDown: 0, durationMs: 0 };
      this.#codes.set(code, c);
    }
    if (c.emitted === 0 || (c.emitted < FOLD_PER_CODE && this.#emitted < FOLD_TOTAL)) {
      c.emitted++;
      this.#emitted++;
      return false;
    }
    const now = Date.now();
    if (c.folded === 0) {
      c.first = event();
      c.firstSeen = now;
    }
    c.folded++;
    c.lastSeen = now;
    c.bytesUp += x.bytesUp;
    c.bytesDown += x.bytesDown;
    c.durationMs += performance.now() - x.start;
    return true;
  }

  /** The codes with refusals folded, in the order their first was folded; marks the fold flushed. */
  take(): [string, FoldCount][] {
    this.flushed = true;
    clearTimeout(this.timer);
    const out = [...this.#codes].filter(([, c]) => c.folded > 0);
    out.sort((a, b) => a[1].firstSeen - b[1].firstSeen);
    this.#codes.clear();
    return out;
  }
}
