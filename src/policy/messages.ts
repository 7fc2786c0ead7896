/**
 * What a refused child prints: the code, what happened and what would allow the
 * request. One place, so the engine's default decide and the runs gate say the same thing;
 * the words are the catalogue's (error-messages.ts), this picks the template and its data.
 */
import { errorMessage } from '../errors.js';
import type { PolicyDecision } from './decide.js';
import type { WireClass } from './types.js';

/** Bodies up to this size can be shown to a reviewer (as UTF-8 text); larger ones are unreviewable. */
export const BODY_PREVIEW_LIMIT = 16 * 1024;

/** The child-facing message of a refusing decision. */
export function refusalMessage(
  d: Exclude<PolicyDecision, { decision: 'allow' }>,
  cls: { class: WireClass; reason: string },
): string {
  const req = { class: cls.class, reason: cls.reason };
  switch (d.policyCode) {
    case 'CLI_REQUEST_TIER_DENIED':
    case 'CLI_APPROVAL_PENDING':
    case 'CLI_CONFIRMATION_NOT_APPROVABLE':
    case 'CLI_CONFIRMATION_AFTER_WRITE':
      return errorMessage(d.policyCode, req);
    case 'CLI_CONFIRMATION_REQUIRED':
      return errorMessage(d.policyCode, { ...req, why: d.reason });
    case 'CLI_CONFIRMATION_UNREVIEWABLE':
      return errorMessage(d.policyCode, { ...req, previewLimit: BODY_PREVIEW_LIMIT });
    default:
      return errorMessage('POLICY_BLOCKED', { ...req, rule: d.policyCode, why: d.reason });
  }
}
