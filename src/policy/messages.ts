/**
 * What a refused child prints: the code, what happened and what would allow the
 * request. One place, so the engine's default decide and the runs gate say the same thing;
 * the words are the catalogue's (error-messages.ts), this picks the template and its data.
 */
import { errorMessage } from '../errors.js';
import type { PolicyDecision } from './decide.js';
import type { TierReason, TierSource } from './tier.js';
import type { WireClass } from './types.js';

/** Bodies up to this size can be shown to a reviewer (as UTF-8 text); larger ones are unreviewable. */
export const BODY_PREVIEW_LIMIT = 16 * 1024;

/** What the run knows beyond the decision, so the message can say more than the rule. */
export interface RefusalContext {
  /** the call's `cliTierReason`, and who chose its requested tier: a tier denial names what capped it */
  tier?: { reason: TierReason; source?: TierSource };
  /** writes the command already sent (redacted): a refusal after them names them as unknown outcomes */
  sent?: readonly { method: string; host: string; path: string }[];
  /** why the request's target cannot be shown to a reviewer whole: an unreviewable refusal says so instead of blaming the body */
  target?: string;
}

/** The child-facing message of a refusing decision. */
export function refusalMessage(
  d: Exclude<PolicyDecision, { decision: 'allow' }>,
  cls: { class: WireClass; reason: string },
  ctx: RefusalContext = {},
): string {
  const req = { class: cls.class, reason: cls.reason };
  switch (d.policyCode) {
    case 'CLI_REQUEST_TIER_DENIED':
      return errorMessage(d.policyCode, {
        ...req,
        ...(ctx.tier ? { capped: ctx.tier.reason, setBy: ctx.tier.source ?? 'caller' } : {}),
      });
    case 'CLI_CONFIRMATION_AFTER_WRITE':
      return errorMessage(d.policyCode, { ...req, ...(ctx.sent ? { sent: ctx.sent } : {}) });
    case 'CLI_APPROVAL_PENDING':
    case 'CLI_CONFIRMATION_NOT_APPROVABLE':
      return errorMessage(d.policyCode, req);
    case 'CLI_CONFIRMATION_REQUIRED':
      return errorMessage(d.policyCode, { ...req, why: d.reason });
    case 'CLI_CONFIRMATION_UNREVIEWABLE':
      return errorMessage(
        d.policyCode,
        ctx.target !== undefined
          ? { ...req, target: ctx.target }
          : { ...req, previewLimit: BODY_PREVIEW_LIMIT },
      );
    default:
      return errorMessage('POLICY_BLOCKED', { ...req, rule: d.policyCode, why: d.reason });
  }
}
