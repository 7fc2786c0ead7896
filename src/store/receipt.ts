/**
 * A call's receipt (docs/audit.md): one JSON document saying what was called, at which tier
 * and why, the credential minted for that tier (never the token), every request with its class, decision and reason, every approval and who decided
 * it, and the chain hashes of the events it was built from, so it can be checked against
 * `clibroker audit verify` (each hash is the one stored at that seq, and that chain verifies).
 */
import type { ChainHead, ChainRow } from './chain.js';
import { eventHash } from './chain.js';
import type { Approval, EgressEvent, ExecutionEvent, StoreEvent } from './types.js';

/** An event's place in the chain, as the receipt cites it. */
export interface ReceiptLink {
  seq: number;
  /** null for an event stored before the chain existed */
  hash: string | null;
}

/** The fields a call's receipt copies from its execution event (the token's grant included, never the token). */
const CALL_FIELDS = [
  'argvDigest',
  'tool',
  'exitCode',
  'signal',
  'code',
  'outcome',
  'durationMs',
  'mintedToken',
] as const;

export type ReceiptCall = ReceiptLink &
  Pick<ExecutionEvent, 'type' | 'time' | 'cliTier' | 'cliTierReason'> &
  Partial<Pick<ExecutionEvent, (typeof CALL_FIELDS)[number]>>;

export interface ReceiptRequest extends ReceiptLink {
  time: string;
  method: string;
  host: string;
  path: string;
  class: EgressEvent['class'];
  decision: EgressEvent['decision'];
  reason: string;
  code?: string;
  policyCode?: string;
  status?: number;
  outcome: EgressEvent['outcome'];
  /** on a summary event: how many refusals it stands for */
  folded?: number;
}

export interface ReceiptApproval {
  id: string;
  status: Approval['status'];
  method: string;
  host: string;
  path: string;
  /** the refused request's digest: what was approved */
  digest: string;
  createdAt: string;
  decidedBy?: string;
  decidedAt?: string;
  consumedAt?: string;
}

export interface Receipt {
  runId: string;
  extensionId?: string;
  cliId?: string;
  /** the tool the agent called, when the host named it */
  tool?: string;
  /** the last call's: sha256 of the CLI's argv as a JSON array of strings */
  argvDigest?: string;
  cliTier?: ExecutionEvent['cliTier'];
  cliTierReason?: string;
  /** the last call's minted credential: its permissions, repositories and expiry */
  mintedToken?: ExecutionEvent['mintedToken'];
  /** how the last call ended */
  outcome?: 'succeeded' | 'failed';
  /** every call of the run (a paused run resumed is two), oldest first */
  calls: ReceiptCall[];
  requests: ReceiptRequest[];
  /** from the approvals the run created (kept beside the chain, not in it) */
  approvals: ReceiptApproval[];
  chain: {
    /** the chain's head when the receipt was made: `audit verify` reports it, or a later one */
    head: ChainHead;
    /** true when every event cited matches its hash (the links between them are verify's job) */
    eventsMatch: boolean;
  };
}

function link(row: ChainRow): ReceiptLink {
  return { seq: row.seq, hash: row.hash };
}

/** Copy the keys of `from` that are set. */
function pick<T extends object, K extends keyof T>(from: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (from[k] !== undefined) out[k] = from[k];
  return out;
}

/** The receipt of run `runId` from its events (seq order) and approvals; undefined when it has no event. */
export function buildReceipt(
  runId: string,
  rows: readonly ChainRow[],
  approvals: readonly Approval[],
  head: ChainHead,
): Receipt | undefined {
  if (rows.length === 0) return undefined;
  const calls: ReceiptCall[] = [];
  const requests: ReceiptRequest[] = [];
  let eventsMatch = true;
  let last: ExecutionEvent | undefined;
  for (const row of rows) {
    if (row.hash === null || eventHash(row, row.seq, row.prev_hash) !== row.hash) eventsMatch = false;
    const e = JSON.parse(row.data) as StoreEvent;
    if (e.type === 'egress.allowed' || e.type === 'egress.blocked') {
      requests.push({
        ...link(row),
        time: e.time,
        method: e.method,
        host: e.host,
        path: e.path,
        class: e.class,
        decision: e.decision,
        reason: e.reason,
        outcome: e.outcome,
        ...pick(e, ['code', 'policyCode', 'status', 'folded']),
      });
    } else if (e.type === 'extension.execution.succeeded' || e.type === 'extension.execution.failed') {
      last = e;
      calls.push({
        ...link(row),
        type: e.type,
        time: e.time,
        cliTier: e.cliTier,
        cliTierReason: e.cliTierReason,
        ...pick(e, CALL_FIELDS),
      });
    }
  }
  return {
    runId,
    ...(last
      ? {
          extensionId: last.extensionId,
          ...pick(last, ['cliId', 'tool', 'argvDigest']),
          cliTier: last.cliTier,
          cliTierReason: last.cliTierReason,
          ...pick(last, ['mintedToken']),
          outcome:
            last.type === 'extension.execution.succeeded' ? ('succeeded' as const) : ('failed' as const),
        }
      : {}),
    calls,
    requests,
    approvals: approvals.map((a) => ({
      id: a.id,
      status: a.status,
      method: a.method,
      host: a.host,
      path: a.path,
      digest: a.digest,
      createdAt: a.createdAt,
      ...pick(a, ['decidedBy', 'decidedAt', 'consumedAt']),
    })),
    chain: { head, eventsMatch },
  };
}
