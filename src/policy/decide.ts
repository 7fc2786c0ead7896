/**
 * The decide phase: class × tier × approval context → allow, deny, or
 * needs-approval. Every refusal is POLICY_BLOCKED with details.policyCode naming the rule,
 * so the child always sees one 422 shape. The approval plumbing (pausing, re-running,
 * consuming the digest) belongs to the runner (src/runs); this only answers.
 */
import type { Decision } from './types.js';
import type { ErrorCode } from '../errors.js';
import type { Tier, WireClass } from './types.js';

/** Where the call runs, which decides whether a person can approve. */
export type ApprovalContext =
  | 'agent-step'
  | 'agent-step-never-asks'
  | 'chat'
  | 'api'
  | 'tool-block'
  | 'scheduled';

/** One struct, so fields can be added without breaking callers (smokescreen's Decide). */
export interface DecideInput {
  class: WireClass;
  tier: Tier;
  context: ApprovalContext;
  /** requestDigest() of this request; needed for destructive requests */
  digest?: string;
  /** digests a person approved for this run (the runner consumes one on use) */
  approvedDigests?: readonly string[];
  /** a write or destructive request was already sent in this command */
  writeAlreadySent?: boolean;
  /** the body can be shown to a reviewer (not binary, compressed or over the preview limit); default true */
  reviewable?: boolean;
}

/** What `decide` answers: allow, deny, or needs an approval, always with a stable reason. */
export type PolicyDecision =
  | { decision: 'allow'; reason: string }
  | { decision: 'deny'; code: 'POLICY_BLOCKED'; policyCode: ErrorCode; reason: string }
  | {
      decision: 'needs-approval';
      code: 'POLICY_BLOCKED';
      policyCode: 'CLI_APPROVAL_PENDING';
      digest: string;
      reason: string;
    };

function deny(policyCode: ErrorCode, reason: string): PolicyDecision {
  return { decision: 'deny', code: 'POLICY_BLOCKED', policyCode, reason };
}

/**
 * Decide one classified request. Reasons are stable strings (docs/policy.md). A
 * destructive request without a digest cannot be approved and is refused as unreviewable.
 */
export function decide(input: DecideInput): PolicyDecision {
  const { class: cls, tier } = input;
  if (cls === 'read') return { decision: 'allow', reason: 'read-allowed' };
  if (tier !== 'write')
    return deny(
      'CLI_REQUEST_TIER_DENIED',
      cls === 'write' ? 'tier-read-denies-write' : 'tier-read-denies-destructive',
    );
  if (cls === 'write') return { decision: 'allow', reason: 'tier-write-allows-write' };
  // destructive at tier write: only a person's approval of this exact request lets it pass
  if (input.context === 'agent-step-never-asks')
    return deny('CLI_CONFIRMATION_NOT_APPROVABLE', 'plan-never-asks');
  if (input.context !== 'agent-step')
    return deny('CLI_CONFIRMATION_REQUIRED', `no-person-in-${input.context}`);
  // approvals exist only in an agent step with a person, so a digest counts only there
  if (input.digest !== undefined && input.approvedDigests?.includes(input.digest)) {
    return { decision: 'allow', reason: 'destructive-approved' };
  }
  if (input.reviewable === false || input.digest === undefined)
    return deny('CLI_CONFIRMATION_UNREVIEWABLE', 'body-unreviewable');
  if (input.writeAlreadySent) return deny('CLI_CONFIRMATION_AFTER_WRITE', 'write-already-sent');
  return {
    decision: 'needs-approval',
    code: 'POLICY_BLOCKED',
    policyCode: 'CLI_APPROVAL_PENDING',
    digest: input.digest,
    reason: 'destructive-needs-approval',
  };
}

/**
 * The engine's two-way Decision: needs-approval is a refusal to the child (the run then
 * pauses), carrying the digest in details.
 */
export function toEngineDecision(d: PolicyDecision): Decision {
  if (d.decision === 'allow') return d;
  if (d.decision === 'deny')
    return { decision: 'deny', code: d.code, policyCode: d.policyCode, reason: d.reason };
  return {
    decision: 'deny',
    code: d.code,
    policyCode: d.policyCode,
    reason: d.reason,
    details: { digest: d.digest },
  };
}
