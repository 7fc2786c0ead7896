/**
 * Input checks and the mapping between store records and rows, shared by both backends (the
 * PostgreSQL tables mirror the SQLite ones). Only the statements differ per backend.
 */
import { type BrokerError, brokerError } from '../errors.js';
import {
  type Approval,
  type ApprovalStatus,
  type ConformanceVerdict,
  type NewConformanceVerdict,
  type EventQuery,
  type PruneInput,
  type ReviewSessionBounds,
  type ReviewSessionRecord,
  RUN_ID_LABEL,
  STORE_EVENT_TYPES,
  type StoreEvent,
  type StoreEventType,
  type ThrottleCounter,
  type Tier,
} from './types.js';

/** The label key an egress event's extension id is read from. */
export const EXTENSION_ID_LABEL = 'extensionId';

export const DEFAULT_LIMIT = 1_000;
export const MAX_LIMIT = 10_000;

function invalid(message: string, details: Record<string, unknown>): BrokerError {
  return brokerError('STORE_INPUT_INVALID', { reason: message }, { details });
}

const HEX64 = /^[0-9a-f]{64}$/;

export function checkDigest(digest: string): string {
  if (typeof digest !== 'string' || !HEX64.test(digest))
    throw invalid('a request digest is 64 lower-case hex characters', {
      digest: String(digest).slice(0, 80),
    });
  return digest;
}

export function checkTier(tier: string): Tier {
  if (tier !== 'read' && tier !== 'write') throw invalid('a tier is read or write', { tier });
  return tier;
}

export function checkText(name: string, value: unknown): string {
  if (typeof value !== 'string' || value === '')
    throw invalid(`${name} must be a non-empty string`, { field: name });
  return value;
}

export function checkLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw invalid(`limit is an integer in 1..${MAX_LIMIT}`, { limit });
  return limit;
}

export function checkOrder(order: string | undefined): 'ASC' | 'DESC' {
  if (order === undefined || order === 'oldest') return 'ASC';
  if (order === 'newest') return 'DESC';
  throw invalid('order is oldest or newest', { order });
}

/** A paging cursor: an event's seq. */
export function checkSeq(seq: number): number {
  if (!Number.isSafeInteger(seq) || seq < 1)
    throw invalid('after is the seq of a stored event (a positive integer)', { after: String(seq) });
  return seq;
}

/** Milliseconds since the epoch of an ISO string or Date; refuses what does not parse. */
export function toMs(name: string, t: string | Date): number {
  const ms = t instanceof Date ? t.getTime() : Date.parse(t);
  if (!Number.isFinite(ms)) throw invalid(`${name} is not a time`, { [name]: String(t) });
  return ms;
}

/** An ISO time as stored: what `t` parses to, in UTC; refuses what does not parse. */
export function checkTime(name: string, t: string): string {
  return new Date(toMs(name, t)).toISOString();
}

export interface EventRow {
  type: StoreEventType;
  time: string;
  time_ms: number;
  run_id: string | null;
  extension_id: string | null;
  decision: 'allow' | 'deny' | null;
  data: string;
}

/** The indexed columns of an event; the event itself is kept whole as JSON in `data`. */
export function eventRow(event: StoreEvent): EventRow {
  if (!STORE_EVENT_TYPES.includes(event?.type))
    throw invalid('unknown event type', { type: String(event?.type) });
  const labels = 'labels' in event ? event.labels : undefined;
  const runId = 'runId' in event ? event.runId : labels?.[RUN_ID_LABEL];
  const extensionId = 'extensionId' in event ? event.extensionId : labels?.[EXTENSION_ID_LABEL];
  const decision = event.type === 'egress.allowed' || event.type === 'egress.blocked' ? event.decision : null;
  if (decision !== null && decision !== 'allow' && decision !== 'deny')
    throw invalid('an egress decision is allow or deny', { decision });
  return {
    type: event.type,
    time: event.time,
    time_ms: toMs('time', event.time),
    run_id: runId ?? null,
    extension_id: extensionId ?? null,
    decision,
    data: JSON.stringify(event),
  };
}

export interface EventFilter {
  /** a stable key naming which filters are set, for the statement cache */
  shape: string;
  sql: string;
  params: Record<string, string | number>;
}

/** WHERE/ORDER/LIMIT for an event query; only set filters appear, so the indexes apply. */
export function eventFilter(q: EventQuery): EventFilter {
  const where: string[] = [];
  const params: Record<string, string | number> = { limit: checkLimit(q.limit) };
  if (q.runId !== undefined) {
    where.push('run_id = @runId');
    params['runId'] = q.runId;
  }
  if (q.type !== undefined) {
    const types: readonly string[] = typeof q.type === 'string' ? [q.type] : q.type;
    for (const t of types)
      if (!STORE_EVENT_TYPES.includes(t as StoreEventType)) throw invalid('unknown event type', { type: t });
    where.push('type IN (SELECT value FROM json_each(@types))');
    params['types'] = JSON.stringify(types);
  }
  if (q.decision !== undefined) {
    if (q.decision !== 'allow' && q.decision !== 'deny')
      throw invalid('decision is allow or deny', { decision: q.decision });
    where.push('decision = @decision');
    params['decision'] = q.decision;
  }
  if (q.extensionId !== undefined) {
    where.push('extension_id = @extensionId');
    params['extensionId'] = q.extensionId;
  }
  if (q.since !== undefined) {
    where.push('time_ms >= @since');
    params['since'] = toMs('since', q.since);
  }
  if (q.until !== undefined) {
    where.push('time_ms < @until');
    params['until'] = toMs('until', q.until);
  }
  const dir = checkOrder(q.order);
  if (q.after !== undefined) {
    where.push(
      `(time_ms, seq) ${dir === 'ASC' ? '>' : '<'} (SELECT time_ms, seq FROM audit_events WHERE seq = @after)`,
    );
    params['after'] = checkSeq(q.after);
  }
  const shape = `${where.map((w) => w.split(' ')[0]).join(',')}|${dir}`;
  const sql = `SELECT seq, data FROM audit_events${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY time_ms ${dir}, seq ${dir} LIMIT @limit`;
  return { shape, sql, params };
}

/** A prune's input, checked: the cutoff in ms and as ISO 8601, and who (absent on a dry run). */
export function pruneInput(input: PruneInput): {
  cutoff: number;
  before: string;
  dryRun: boolean;
  who?: string;
} {
  const cutoff = toMs('before', input?.before);
  // fail safe: only an explicit false deletes
  const dryRun = input.dryRun !== false;
  const before = new Date(cutoff).toISOString();
  return dryRun ? { cutoff, before, dryRun } : { cutoff, before, dryRun, who: checkText('who', input.who) };
}

/**
 * The events a prune deletes, `param` naming the cutoff (ms): older than it, and not of a
 * run with an open approval (pending, or approved and not yet consumed). The same rule as
 * the schema's delete trigger on both backends, which refuses any other delete.
 */
export function prunable(param: string): string {
  return `time_ms < ${param} AND (run_id IS NULL OR run_id NOT IN (SELECT run_id FROM approvals WHERE status IN ('pending', 'approved')))`;
}

/** Retention in days: a positive number (the configuration takes whole days, 1 or more). */
export function checkRetentionDays(days: unknown): number {
  if (typeof days !== 'number' || !(days > 0) || !Number.isFinite(days))
    throw invalid('retentionDays is a positive number', { retentionDays: String(days) });
  return days;
}

export interface ApprovalRow {
  id: string;
  run_id: string;
  digest: string;
  method: string;
  host: string;
  path: string;
  graphql_operation: string | null;
  body_preview: string | null;
  tool: string;
  tool_args: string;
  status: ApprovalStatus;
  created_at: string;
  decided_at: string | null;
  decided_by: string | null;
  consumed_at: string | null;
  /** absent on a database from before the column */
  held_until?: string | null;
}

export function approvalFromRow(r: ApprovalRow): Approval {
  return {
    id: r.id,
    runId: r.run_id,
    digest: r.digest,
    method: r.method,
    host: r.host,
    path: r.path,
    ...(r.graphql_operation !== null ? { graphqlOperation: r.graphql_operation } : {}),
    ...(r.body_preview !== null ? { bodyPreview: r.body_preview } : {}),
    tool: r.tool,
    toolArgs: JSON.parse(r.tool_args) as unknown,
    status: r.status,
    createdAt: r.created_at,
    ...(r.decided_at !== null ? { decidedAt: r.decided_at } : {}),
    ...(r.decided_by !== null ? { decidedBy: r.decided_by } : {}),
    ...(r.consumed_at !== null ? { consumedAt: r.consumed_at } : {}),
    ...(r.held_until !== null && r.held_until !== undefined ? { heldUntil: r.held_until } : {}),
  };
}

/**
 * The approval's tool arguments as stored (JSON).
 * @throws BrokerError STORE_INPUT_INVALID for a value JSON cannot hold (cycles, BigInt, undefined)
 */
export function toolArgsJson(value: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    // cycles or BigInt: reported below as invalid input
  }
  if (json === undefined) throw invalid('toolArgs must be JSON-serializable', { field: 'toolArgs' });
  return json;
}

/** A conformance verdict as stored (both backends). */
export interface ConformanceRow {
  seq: number | string;
  sha256: string;
  image: string;
  executable: string;
  verdict: string;
  code: string | null;
  tool: string | null;
  time: string;
}

export const CONFORMANCE_COLUMNS = 'seq, sha256, image, executable, verdict, code, tool, time';

/** Check a sha256 the store looks verdicts up by. */
export function checkSha256(sha256: unknown): string {
  if (typeof sha256 !== 'string' || !HEX64.test(sha256))
    throw invalid('a sha256 is 64 lower-case hex characters', { sha256: String(sha256).slice(0, 80) });
  return sha256;
}

/** A verdict's columns in insert order (sha256, image, executable, verdict, code, tool), checked. */
export function conformanceParams(v: NewConformanceVerdict): (string | null)[] {
  if (v.verdict !== 'pass' && v.verdict !== 'refused')
    throw invalid('a verdict is pass or refused', { verdict: String(v.verdict).slice(0, 40) });
  if ((v.verdict === 'refused') !== (v.code !== undefined))
    throw invalid('a refused verdict has its code, and only a refused one', { verdict: v.verdict });
  return [
    checkSha256(v.sha256),
    checkText('image', v.image),
    checkText('executable', v.executable),
    v.verdict,
    v.code === undefined ? null : checkText('code', v.code),
    v.tool === undefined ? null : checkText('tool', v.tool),
  ];
}

export function conformanceFromRow(r: ConformanceRow): ConformanceVerdict {
  return {
    seq: Number(r.seq),
    sha256: r.sha256,
    image: r.image,
    executable: r.executable,
    verdict: r.verdict as ConformanceVerdict['verdict'],
    ...(r.code === null ? {} : { code: r.code }),
    ...(r.tool === null ? {} : { tool: r.tool }),
    time: r.time,
  };
}

/** Longest review-session id or throttle key the store takes (a hash is 64, an IPv6 address 45). */
export const MAX_KEY_LENGTH = 512;

/** A review-session id or a throttle key: a non-empty string of at most MAX_KEY_LENGTH characters. */
export function checkKey(name: string, value: unknown): string {
  const s = checkText(name, value);
  if (s.length > MAX_KEY_LENGTH)
    throw invalid(`${name} is at most ${MAX_KEY_LENGTH} characters`, { field: name, length: s.length });
  return s;
}

/**
 * An epoch-ms time or a count as the store keeps it: a finite number within the safe
 * integers, truncated to an integer (the columns are integers; ms beyond 2^31 fit).
 */
export function checkMs(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || Math.abs(value) > Number.MAX_SAFE_INTEGER)
    throw invalid(`${name} must be a finite number`, { field: name, value: String(value).slice(0, 40) });
  return Math.trunc(value);
}

/** A bound: a positive safe integer. */
export function checkBound(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    throw invalid(`${name} must be an integer of at least 1`, {
      field: name,
      value: String(value).slice(0, 40),
    });
  return value;
}

/** A ping's timeout: absent (the default) or a positive finite number of ms. */
export function checkTimeout(timeoutMs: unknown, fallback: number): number {
  if (timeoutMs === undefined) return fallback;
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw invalid('timeoutMs must be a positive number', { timeoutMs: String(timeoutMs).slice(0, 40) });
  return timeoutMs;
}

/** A review session as stored (both backends; PostgreSQL's bigints arrive as strings). */
export interface ReviewSessionRow {
  id: string;
  who: string;
  issued_at: number | string;
  last_seen: number | string;
}

/** A session to store and the bounds it is issued under, checked. */
export function reviewSessionInput(
  session: ReviewSessionRecord,
  bounds: ReviewSessionBounds,
): { session: ReviewSessionRecord; bounds: ReviewSessionBounds } {
  if (typeof session !== 'object' || session === null)
    throw invalid('a review session is an object', { field: 'session' });
  if (typeof bounds !== 'object' || bounds === null)
    throw invalid('review session bounds are an object', { field: 'bounds' });
  return {
    session: {
      id: checkKey('id', session.id),
      who: checkText('who', session.who),
      issuedAt: checkMs('issuedAt', session.issuedAt),
      lastSeen: checkMs('lastSeen', session.lastSeen),
    },
    bounds: {
      issuedAfter: checkMs('issuedAfter', bounds.issuedAfter),
      seenAfter: checkMs('seenAfter', bounds.seenAfter),
      perReviewer: checkBound('perReviewer', bounds.perReviewer),
      overall: checkBound('overall', bounds.overall),
    },
  };
}

export function reviewSessionFromRow(r: ReviewSessionRow): ReviewSessionRecord {
  return { id: r.id, who: r.who, issuedAt: Number(r.issued_at), lastSeen: Number(r.last_seen) };
}

/** A throttle counter as stored (both backends; PostgreSQL's bigints arrive as strings). */
export interface ThrottleRow {
  key: string;
  window_start: number | string;
  failures: number | string;
  last: number | string;
  locked_until: number | string;
  strikes: number | string;
}

export function throttleFromRow(r: ThrottleRow): ThrottleCounter {
  return {
    windowStart: Number(r.window_start),
    failures: Number(r.failures),
    last: Number(r.last),
    lockedUntil: Number(r.locked_until),
    strikes: Number(r.strikes),
  };
}

/** The keys of a throttle call, checked and without repeats (in first-seen order). */
export function throttleKeys(keys: readonly string[]): string[] {
  if (!Array.isArray(keys)) throw invalid('keys must be an array of strings', { field: 'keys' });
  return [...new Set(keys.map((k) => checkKey('key', k)))];
}

/**
 * What an `updateThrottle` callback returned, checked: a Map whose keys are among the keys
 * the call locked (a counter under any other key would be written unserialised), each
 * counter's fields finite numbers. Rows in the order of `keys`.
 */
export function throttleOutput(keys: readonly string[], out: unknown): ThrottleRow[] {
  if (!(out instanceof Map))
    throw invalid('the throttle update must return a Map of counters', { field: 'counters' });
  const rows: ThrottleRow[] = [];
  for (const key of out.keys()) {
    if (!keys.includes(key as string))
      throw invalid('the throttle update returned a key it was not given', {
        key: String(key).slice(0, 80),
      });
  }
  for (const key of keys) {
    const c = out.get(key) as ThrottleCounter | undefined;
    if (c === undefined) continue;
    if (typeof c !== 'object' || c === null) throw invalid('a throttle counter is an object', { key });
    rows.push({
      key,
      window_start: checkMs('windowStart', c.windowStart),
      failures: checkMs('failures', c.failures),
      last: checkMs('last', c.last),
      locked_until: checkMs('lockedUntil', c.lockedUntil),
      strikes: checkMs('strikes', c.strikes),
    });
  }
  return rows;
}
