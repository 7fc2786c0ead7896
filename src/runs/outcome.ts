/**
 * How a run ended, from what the broker refused and how the CLI ended. Pure: the runner
 * hands in the refusals in request order, whether the gate holds a pending approval, and the
 * sandbox's exit; docs/runs.md states the same rule in prose.
 *
 *   the first policy refusal ─▶ paused (it is the approval the gate holds) | refused
 *   ─▶ timed_out ─▶ failed (ended by a signal)
 *   ─▶ the CLI failed: refused with the first other refusal, when there is one
 *   ─▶ completed (a non-zero exit is data)
 */
import { CATALOGUE, type ErrorCode, isErrorCode } from '../errors.js';
import type { RefusedRequest } from './types.js';

/**
 * What a refusal means for the call:
 * - `policy`: a rule refused the request for what it is or where it goes (tier, approvals,
 *   budgets, ungovernable traffic, the credential that could not be minted). The call fails
 *   with it whatever the CLI's exit code: curl exits 0 on a 422, and a CLI that carries on
 *   after a refused write has not done what it was asked.
 * - `outlivable`: a host outside the egress list (az's update check). A CLI that succeeded
 *   did not need it.
 * - `incidental`: not a decision about the request: the vendor unreachable or slow, the
 *   session already closed, a failure inside clibroker. The deadline or the child's own death
 *   causes these (a request cut off when the child was killed), so they never win over
 *   `timed_out` or a death by signal, and a CLI that retried and succeeded completed.
 */
export type RefusalWeight = 'policy' | 'outlivable' | 'incidental';

const OUTLIVABLE: ReadonlySet<string> = new Set<ErrorCode>(['CLI_EGRESS_HOST_DENIED']);

/**
 * Refusals a connection closed mid-request produces as well: a request cut short (a killed
 * curl's half-sent chunked upload) cannot be parsed. When the CLI did not exit on its own they
 * are the kill's doing, and weigh as incidental; after a normal exit they stay policy
 * refusals (a malformed request the CLI survived still fails the call).
 */
const CUT_SHORT: ReadonlySet<string> = new Set<ErrorCode>(['CLI_BAD_REQUEST']);

/**
 * Child-side codes that are no decision about a request: the connection stalled before a
 * request head was complete (a pooled keep-alive connection or a stuck client), so nothing
 * was classified, and a CLI that retried and succeeded did its work.
 */
const STALLED: ReadonlySet<string> = new Set<ErrorCode>([
  'CLI_TLS_HANDSHAKE_TIMEOUT',
  'CLI_REQUEST_HEAD_TIMEOUT',
]);

/** Fail closed: a code this build does not know weighs as a policy refusal. */
export function refusalWeight(r: Pick<RefusedRequest, 'code' | 'policyCode'>, killed = false): RefusalWeight {
  const code = r.policyCode ?? r.code;
  if (OUTLIVABLE.has(code)) return 'outlivable';
  if (STALLED.has(code) || (killed && CUT_SHORT.has(code))) return 'incidental';
  if (!isErrorCode(code)) return 'policy';
  const side = CATALOGUE[code].side;
  return side === 'upstream' || side === 'broker' ? 'incidental' : 'policy';
}

export interface OutcomeInput {
  /** every refused request of the run, in order */
  refusals: readonly RefusedRequest[];
  /** the gate holds a destructive request waiting for a person */
  pending: boolean;
  /** null: the CLI was ended by a signal */
  exitCode: number | null;
  timedOut: boolean;
}

export type Outcome =
  | { status: 'paused'; refusal: RefusedRequest }
  | { status: 'refused'; refusal: RefusedRequest }
  | { status: 'timed_out'; code: 'CLI_TIMEOUT' }
  | { status: 'failed'; code: 'CLI_EXITED_BY_SIGNAL' }
  | { status: 'completed' };

export function runOutcome(i: OutcomeInput): Outcome {
  // The first one: the CLI usually stops at it, and what follows may be its consequence.
  const killed = i.timedOut || i.exitCode === null;
  const policy = i.refusals.find((r) => refusalWeight(r, killed) === 'policy');
  if (policy)
    return policy.policyCode === 'CLI_APPROVAL_PENDING' && i.pending
      ? { status: 'paused', refusal: policy }
      : { status: 'refused', refusal: callRefusal(policy) };
  if (i.timedOut) return { status: 'timed_out', code: 'CLI_TIMEOUT' };
  if (i.exitCode === null) return { status: 'failed', code: 'CLI_EXITED_BY_SIGNAL' };
  if (i.exitCode !== 0) {
    // The vendor being unreachable explains a failure better than a blocked phone-home.
    const refusal = i.refusals.find((r) => refusalWeight(r, killed) === 'incidental') ?? i.refusals[0];
    if (refusal) return { status: 'refused', refusal };
  }
  return { status: 'completed' };
}

/**
 * The codes of a person's confirmation rules. The child sees each as POLICY_BLOCKED with the
 * rule in policyCode (one refusal shape for every CLI); the caller gets it as the call's
 * failure code itself, so a client that branches on the code cannot miss it. Only the policy
 * decisions about a request's tier and destination (a tier denial, a host or address outside
 * egress) stay POLICY_BLOCKED with details.policyCode.
 */
const CONFIRMATION: ReadonlySet<string> = new Set<ErrorCode>([
  'CLI_CONFIRMATION_REQUIRED',
  'CLI_CONFIRMATION_NOT_APPROVABLE',
  'CLI_CONFIRMATION_AFTER_WRITE',
  'CLI_CONFIRMATION_UNREVIEWABLE',
  'EXEC_ACTION_CONFIRMATION_DECLINED',
]);

/** The refusal as the call fails with it: a confirmation rule is the failure code itself. */
export function callRefusal(r: RefusedRequest): RefusedRequest {
  if (r.policyCode === undefined || !CONFIRMATION.has(r.policyCode)) return r;
  const { policyCode, ...rest } = r;
  return { ...rest, code: policyCode };
}

/**
 * Whether what the call did at the vendor is unknown, so nothing retries it on its own: writes
 * whose outcome nobody saw, a tier denial (the CLI was stopped part-way through what it was
 * asked), or a call that ended badly after it had sent a write.
 */
export function outcomeUnknown(
  end: Outcome,
  facts: { unknownOutcomes: readonly unknown[]; writesSent: number },
): boolean {
  if (facts.unknownOutcomes.length > 0) return true;
  if (end.status === 'completed' || end.status === 'paused') return false;
  if (end.status === 'refused' && (end.refusal.policyCode ?? end.refusal.code) === 'CLI_REQUEST_TIER_DENIED')
    return true;
  return facts.writesSent > 0;
}

/** A refusal a completed call outlived, as its result and execution event name it. */
export function outlived(r: RefusedRequest): { code: string; method: string; host: string; path: string } {
  return { code: r.policyCode ?? r.code, method: r.method, host: r.host, path: r.path };
}
