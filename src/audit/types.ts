/**
 * The audit layer's words: the one event every request ends in, whatever ended it. The engine
 * builds it, the store keeps it, hosts and observers read it; docs/phases.md documents every field.
 */
import type { WireClass } from '../policy/types.js';

/** What became of a request: the vendor answered, nothing of it reached the vendor, or it may have and no answer came. */
export type Outcome = 'sent' | 'not_sent' | 'unknown';
/** Who cut a request off: the child closed its socket, the vendor's side failed, or the session ended (deadline or close). */
export type AbortedBy = 'child' | 'upstream' | 'deadline';

/** One event per request, whatever ended it. */
export interface AuditEvent {
  /** egress.blocked exactly when the broker answered the child itself instead of the vendor */
  type: 'egress.allowed' | 'egress.blocked';
  time: string;
  session: string;
  labels?: Readonly<Record<string, string>>;
  method: string;
  /** the CONNECT host, secret-shaped labels replaced (`{redacted}.example.com`) */
  host: string;
  /** redacted path: no query, secret-shaped segments replaced */
  path: string;
  /** the classifier's class, or the class the method implies when it never ran */
  class: WireClass;
  decision: 'allow' | 'deny';
  reason: string;
  code?: string;
  policyCode?: string;
  /** the vendor's status; only when the vendor answered */
  status?: number;
  /** the status of the broker's own answer (a refusal or an upstream failure) */
  refusalStatus?: number;
  outcome: Outcome;
  /** set when either side, or the session's end, cut the request off */
  abortedBy?: AbortedBy;
  requestBytes: number;
  responseBytes: number;
  /** ms from request head to response end (a summary: the folded requests' durations summed) */
  durationMs: number;
  /**
   * Set on a summary event only: this many refusals of `code` were not written one by one
   * (a call writes at most 8 events of one child-side code, and 64 of all such codes, itself;
   * see docs/phases.md). Method, host, path, class and reason are the first folded one's;
   * `requestBytes`, `responseBytes` and `durationMs` are summed over all of them.
   */
  folded?: number;
  /** on a summary event: when the first folded refusal was made (ISO 8601) */
  firstSeen?: string;
  /** on a summary event: when the last folded refusal was made (ISO 8601) */
  lastSeen?: string;
}
