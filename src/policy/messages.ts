/**
 * What a refused child prints: the code, what happened and what would allow the
 * request. One place, so the engine's default decide and the runs gate say the same thing.
 */
import type { PolicyDecision } from './decide.js';
import type { WireClass } from './types.js';

/** Bodies up to this size can be shown to a reviewer (as UTF-8 text); larger ones are unreviewable. */
export const BODY_PREVIEW_LIMIT = 16 * 1024;

/** The child-facing message of a refusing decision. */
export function refusalMessage(
  d: Exclude<PolicyDecision, { decision: 'allow' }>,
  cls: { class: WireClass; reason: string },
): string {
  const what = `this ${cls.class} request (${cls.reason})`;
  switch (d.policyCode) {
    case 'CLI_REQUEST_TIER_DENIED':
      return `CLI_REQUEST_TIER_DENIED: ${what} needs tier write, and this call runs at tier read. Run the command with cliTier write, if the organization and assignment allow it.`;
    case 'CLI_APPROVAL_PENDING':
      return `CLI_APPROVAL_PENDING: ${what} needs a person to approve it; the run paused and the request was not sent. Once approved, the command runs again.`;
    case 'CLI_CONFIRMATION_REQUIRED':
      return `CLI_CONFIRMATION_REQUIRED: ${what} needs a person's approval, and no person can approve in this context (${d.reason}).`;
    case 'CLI_CONFIRMATION_NOT_APPROVABLE':
      return `CLI_CONFIRMATION_NOT_APPROVABLE: ${what} needs a person's approval, and this step's plan never asks one.`;
    case 'CLI_CONFIRMATION_UNREVIEWABLE':
      return `CLI_CONFIRMATION_UNREVIEWABLE: ${what} needs approval, but its body cannot be shown to a reviewer (binary, compressed or over ${BODY_PREVIEW_LIMIT} bytes).`;
    case 'CLI_CONFIRMATION_AFTER_WRITE':
      return `CLI_CONFIRMATION_AFTER_WRITE: ${what} needs approval, but this command already sent a write; re-running it would repeat that write. Split the command so the destructive step runs alone.`;
    default:
      return `${d.policyCode}: ${what} was refused (${d.reason}).`;
  }
}
