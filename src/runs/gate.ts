/**
 * The decide phase of one run (DESIGN §5): the policy module answers, this keeps the run's
 * state around it — whether a write was already sent, which approved digests are left, the
 * first destructive request that needs a person (the run then pauses on it), and the first
 * refusal (which wins over the CLI's exit code in the result).
 */
import { maskKnownSecrets, redactSecrets } from '../credentials/secret-shape.js';
import type { Classification, Decision, RequestHead, Tier } from '../broker/types.js';
import { type ApprovalContext, decide, type GraphqlInfo, requestDigest, toEngineDecision } from '../policy/index.js';
import { redactPath } from '../audit/redact.js';

/** Bodies up to this size can be shown to a reviewer (as UTF-8 text); larger ones are unreviewable. */
export const BODY_PREVIEW_LIMIT = 16 * 1024;

/** What a paused run shows the person (already redacted). */
export interface PendingRequest {
  digest: string;
  method: string;
  host: string;
  path: string;
  graphqlOperation?: string;
  bodyPreview?: string;
}

export interface Gate {
  decide(head: RequestHead, cls: Classification, body: Buffer | undefined): Promise<Decision>;
  readonly pending: PendingRequest | undefined;
  /** approved digests that were consumed during this run */
  readonly consumed: readonly string[];
}

export interface GateInput {
  tier: Tier;
  context: ApprovalContext;
  runId: string;
  /** digests the host's approval flow says were approved for this command */
  approvedDigests: readonly string[];
  /** atomically consume an approved digest; false when it was not (or no longer) approved */
  consume(digest: string): Promise<boolean>;
  /** the connection's secrets: never in a preview */
  secrets: readonly string[];
}

/** A body a person can read: text, not compressed, within the preview limit. */
function preview(head: RequestHead, body: Buffer | undefined, secrets: readonly string[]): { reviewable: boolean; text?: string } {
  if (body === undefined || body.length === 0) return { reviewable: true };
  if (body.length > BODY_PREVIEW_LIMIT) return { reviewable: false };
  const enc = head.headers['content-encoding'];
  if (enc && enc !== 'identity') return { reviewable: false };
  const text = body.toString('utf8');
  // invalid UTF-8 decodes to U+FFFD; NULs and other control bytes mean binary
  if (text.includes('\uFFFD') || /[\u0000-\u0008\u000e-\u001f]/.test(text)) return { reviewable: false };
  return { reviewable: true, text: maskKnownSecrets(redactSecrets(text), secrets) };
}

export function createGate(input: GateInput): Gate {
  const approved = new Set(input.approvedDigests);
  const consumed: string[] = [];
  let writeSent = false;
  let pending: PendingRequest | undefined;
  return {
    get pending() {
      return pending;
    },
    consumed,
    async decide(head, cls, body) {
      const destructive = cls.class === 'destructive';
      const digest = destructive ? requestDigest(head.method, head.host, head.target, body ?? Buffer.alloc(0)) : undefined;
      const shown = destructive ? preview(head, body, input.secrets) : { reviewable: true };
      const d = decide({
        class: cls.class,
        tier: input.tier,
        context: input.context,
        ...(digest ? { digest } : {}),
        approvedDigests: [...approved],
        writeAlreadySent: writeSent,
        reviewable: shown.reviewable,
      });
      if (d.decision === 'allow' && digest && approved.has(digest)) {
        // Single use: the digest is consumed before the request goes out, atomically in the store.
        approved.delete(digest);
        if (!(await input.consume(digest))) {
          return { decision: 'deny', code: 'POLICY_BLOCKED', policyCode: 'CLI_CONFIRMATION_REQUIRED', reason: 'POLICY_BLOCKED (CLI_CONFIRMATION_REQUIRED): the approval for this request was already used or withdrawn.' };
        }
        consumed.push(digest);
      }
      if (d.decision === 'allow' && cls.class !== 'read') writeSent = true;
      if (d.decision === 'needs-approval' && pending === undefined) {
        const op = (cls.graphql as GraphqlInfo | undefined)?.operations?.[0]?.name;
        pending = {
          digest: d.digest,
          method: head.method,
          host: head.host,
          path: redactPath(head.target),
          ...(op ? { graphqlOperation: op } : {}),
          ...(shown.text !== undefined ? { bodyPreview: shown.text } : {}),
        };
      }
      const engine = toEngineDecision(d);
      if (engine.decision === 'deny') engine.reason = denyMessage(d.decision === 'needs-approval' ? 'CLI_APPROVAL_PENDING' : engine.policyCode ?? engine.code, cls, engine.reason);
      return engine;
    },
  };
}

/** The message the child prints: the code, what happened and what would allow it. */
function denyMessage(code: string, cls: Classification, reason: string): string {
  const what = `this ${cls.class} request (${cls.reason})`;
  switch (code) {
    case 'CLI_REQUEST_TIER_DENIED':
      return `POLICY_BLOCKED (CLI_REQUEST_TIER_DENIED): ${what} needs tier write, and this call runs at tier read. Run the command with cliTier write, if the organization and assignment allow it.`;
    case 'CLI_APPROVAL_PENDING':
      return `POLICY_BLOCKED (CLI_APPROVAL_PENDING): ${what} needs a person to approve it; the run paused and the request was not sent. Once approved, the command runs again.`;
    case 'CLI_CONFIRMATION_REQUIRED':
      return `POLICY_BLOCKED (CLI_CONFIRMATION_REQUIRED): ${what} needs a person's approval, and no person can approve in this context (${reason}).`;
    case 'CLI_CONFIRMATION_NOT_APPROVABLE':
      return `POLICY_BLOCKED (CLI_CONFIRMATION_NOT_APPROVABLE): ${what} needs a person's approval, and this step's plan never asks one.`;
    case 'CLI_CONFIRMATION_UNREVIEWABLE':
      return `POLICY_BLOCKED (CLI_CONFIRMATION_UNREVIEWABLE): ${what} needs approval, but its body cannot be shown to a reviewer (binary, compressed or over ${BODY_PREVIEW_LIMIT} bytes).`;
    case 'CLI_CONFIRMATION_AFTER_WRITE':
      return `POLICY_BLOCKED (CLI_CONFIRMATION_AFTER_WRITE): ${what} needs approval, but this command already sent a write; re-running it would repeat that write. Split the command so the destructive step runs alone.`;
    default:
      return reason;
  }
}
