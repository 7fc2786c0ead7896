/**
 * The decide phase's one composition of the policy: `decide` answers, the answer becomes the
 * engine's two-way Decision, and a refusal is worded for the child. The pipeline's default
 * (no host hook) and the runs gate (approvals) both decide through here, so a refusal reads
 * the same whichever of them made it.
 */
import { type DecideInput, decide, type PolicyDecision, toEngineDecision } from '../policy/decide.js';
import { type RefusalContext, refusalMessage } from '../policy/messages.js';
import type { Classification, Decision, Tier } from './types.js';

/** The policy's own answer, and the Decision the engine acts on. */
export interface Decided {
  /** allow, deny or needs-approval, with the policy's stable reason */
  readonly verdict: PolicyDecision;
  /** allow as the policy said; anything else a denial whose reason is the child's message */
  readonly decision: Decision;
}

/**
 * Decides one classified request. `words` is what the caller knows beyond the rule (why the
 * tier is capped, the writes already sent, why a target cannot be shown), so the message can
 * say more.
 */
export function decideRequest(input: DecideInput, cls: Classification, words: RefusalContext = {}): Decided {
  const verdict = decide(input);
  if (verdict.decision === 'allow') return { verdict, decision: verdict };
  return { verdict, decision: { ...toEngineDecision(verdict), reason: refusalMessage(verdict, cls, words) } };
}

/** Without a host's decide hook: the policy's decide with no person to ask (reads pass, writes need tier write). */
export function defaultDecide(tier: Tier, cls: Classification): Decision {
  return decideRequest({ class: cls.class, tier, context: 'api' }, cls).decision;
}
