/**
 * The audit step, run for every outcome as pingora's `logging()` is: every request the
 * child sends — forwarded, refused by any phase inside the tunnel or outside it (CONNECT,
 * plain HTTP, upgrades, parse errors, handshake timeouts), or cut off by either side — is
 * an Exchange, and `audit` turns it into exactly one event. A refusal is a BrokerError
 * from the phase that threw it to the event; nothing converts it on the way.
 */
import { redactHostLabels } from '../audit/redact.js';
import type { BrokerError, ErrorCode } from '../errors.js';
import { MAX_REFUSAL_REASON, redactLogText } from '../audit/logger.js';
import type { BrokerEnv } from './env.js';
import type { Session } from './session.js';
import type { AbortedBy, AuditEvent, Classification, Decision, Outcome, WireClass } from './types.js';

/** What the audit step knows about one request, wherever it ended. */
export interface Exchange {
  readonly session: Session;
  readonly host: string;
  readonly method: string;
  /** the request target as sent ('' for a CONNECT, '-' when it could not be parsed) */
  readonly target: string;
  readonly start: number;
  classification?: Classification;
  decision?: Decision;
  /** set when the broker answered the child itself instead of the vendor: the one refusal shape */
  refusal?: BrokerError;
  /** the status of the broker's own answer, when it gave one */
  refusalStatus?: number;
  /** the vendor's status, once its response head arrived */
  status?: number;
  /** the request went to an upstream connection (the upstream client started writing it) */
  started: boolean;
  /** the vendor's response reached the child in full */
  ended: boolean;
  abortedBy?: AbortedBy;
  /** the code of what cut the request off (deadline, upstream failure mid-response) */
  abortCode?: ErrorCode;
  abortReason?: string;
  bytesUp: number;
  bytesDown: number;
  audited: boolean;
}

/** A new exchange; every one counts against the session's request budget, refused or not. */
export function newExchange(session: Session, host: string, method: string, target: string): Exchange {
  session.stats.requests++;
  return {
    session,
    host,
    method,
    target,
    start: performance.now(),
    started: false,
    ended: false,
    bytesUp: 0,
    bytesDown: 0,
    audited: false,
  };
}

/** Audits a request refused outside the tunnel pipeline (CONNECT, plain HTTP, upgrade, parse error, TLS). */
export function auditRefusal(
  env: BrokerEnv,
  session: Session,
  host: string,
  method: string,
  target: string,
  refusal: BrokerError,
  refusalStatus: number | undefined,
): void {
  const x = newExchange(session, host, method, target);
  x.refusal = refusal;
  if (refusalStatus !== undefined) x.refusalStatus = refusalStatus;
  audit(env, x);
}

/**
 * Marks an exchange cut off by the child's socket closing — or by the session ending, which
 * closes that socket too. Never an upstream failure, never a refusal.
 */
export function cutByChild(x: Exchange): void {
  if (x.abortedBy !== undefined || x.ended || x.refusal !== undefined) return;
  if (x.session.closed) {
    x.abortedBy = 'deadline';
    x.abortCode = x.session.expired ? 'CLI_TIMEOUT' : 'CLI_SESSION_CLOSED';
    x.abortReason = x.session.expired
      ? 'the session deadline passed while the request was in flight'
      : 'the session was closed while the request was in flight';
  } else {
    x.abortedBy = 'child';
    x.abortReason = 'the child closed the connection before the response was complete';
  }
}

/** The class a method implies, for a request refused before the classifier ran (or by it). */
export function impliedClass(method: string): WireClass {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return 'read';
  return method === 'DELETE' ? 'destructive' : 'write';
}

function outcomeOf(x: Exchange): Outcome {
  if (x.status !== undefined) return 'sent';
  return x.started ? 'unknown' : 'not_sent';
}

/** The one audit step: runs once per exchange (a second call is a no-op). */
export function audit(env: BrokerEnv, x: Exchange): void {
  if (x.audited) return;
  x.audited = true;
  const s = x.session;
  const r = x.refusal;
  const fold = s.fold;
  fold.audited++;
  if (r) s.stats.refused++;
  s.stats.bytesUp += x.bytesUp;
  s.stats.bytesDown += x.bytesDown;
  // what became of an allowed request goes back to its decision (a single-use approval is
  // given back when the request never reached the vendor), listened to or not
  if (x.decision?.decision === 'allow') x.decision.settle?.(outcomeOf(x));
  // nobody listening (no logger, sink or channel subscriber): no event to build
  if (env.auditor.wants(s) && !(r && fold.fold(x, r.code, r.policyCode, () => eventOf(x, ''))))
    env.auditor.egress(s, eventOf(x, new Date().toISOString()));
  // the last request of a closed session is in: the summaries of what was folded go out now
  if (s.closed && !fold.flushed && fold.audited >= s.stats.requests) writeFolded(env, s);
}

/** The event of one exchange, fields redacted. */
function eventOf(x: Exchange, time: string): AuditEvent {
  const s = x.session;
  const r = x.refusal;
  const code = r?.code ?? x.abortCode;
  // The child names the host (CONNECT, SNI, Host), so it can carry a token: its secret-shaped
  // labels are redacted like a path's segments, in the host field and wherever a message echoes it.
  const host = s.redacted.host(x.host);
  // Refusal messages can echo what the child sent (a stamper's error, a host name): redacted.
  const reason = r
    ? redactLogText(
        redactHostLabels(host === x.host ? r.message : r.message.split(x.host).join(host)),
        MAX_REFUSAL_REASON,
      )
    : (x.abortReason ?? x.decision?.reason ?? 'unknown');
  return {
    type: r ? 'egress.blocked' : 'egress.allowed',
    time,
    session: s.id,
    ...(s.labels ? { labels: s.labels } : {}),
    method: x.method,
    host,
    path: x.target === '' || x.target === '-' ? x.target : s.redacted.path(x.target),
    class: x.classification?.class ?? impliedClass(x.method),
    decision: r ? 'deny' : 'allow',
    reason,
    ...(code ? { code } : {}),
    ...(r?.policyCode ? { policyCode: r.policyCode } : {}),
    ...(x.status !== undefined ? { status: x.status } : {}),
    ...(x.refusalStatus !== undefined ? { refusalStatus: x.refusalStatus } : {}),
    outcome: outcomeOf(x),
    ...(x.abortedBy ? { abortedBy: x.abortedBy } : {}),
    requestBytes: x.bytesUp,
    responseBytes: x.bytesDown,
    durationMs: Math.round((performance.now() - x.start) * 1000) / 1000,
  };
}

/** How long a closed session waits for its last requests before it writes its summaries anyway. */
const FOLD_SETTLE_MS = 1000;

/**
 * The session closed: once every request it admitted is audited (at once, usually), one
 * summary event per folded code. A request never audited cannot hold the summaries back
 * past {@link FOLD_SETTLE_MS}; a refusal audited after they went out is its own event.
 */
export function sessionClosed(env: BrokerEnv, s: Session): void {
  const fold = s.fold;
  if (fold.flushed) return;
  if (fold.audited >= s.stats.requests) {
    writeFolded(env, s);
    return;
  }
  fold.timer = setTimeout(() => writeFolded(env, s), FOLD_SETTLE_MS);
  fold.timer.unref();
}

/**
 * One `egress.blocked` event per folded code: the first folded refusal's method, host, path,
 * class and reason (redacted as any event's), `folded` the exact count, `firstSeen` and
 * `lastSeen` when the first and last were refused, the bytes and durations summed.
 */
function writeFolded(env: BrokerEnv, s: Session): void {
  const folded = s.fold.take();
  if (folded.length === 0 || !env.auditor.wants(s)) return;
  const time = new Date().toISOString();
  for (const [, c] of folded) {
    // built when the first was folded; its time is when the summary is written
    const event = c.first;
    if (event === undefined) continue;
    event.time = time;
    event.folded = c.folded;
    event.firstSeen = new Date(c.firstSeen).toISOString();
    event.lastSeen = new Date(c.lastSeen).toISOString();
    event.requestBytes = c.bytesUp;
    event.responseBytes = c.bytesDown;
    event.durationMs = Math.round(c.durationMs * 1000) / 1000;
    env.auditor.egress(s, event);
  }
}
