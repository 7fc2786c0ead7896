/**
 * The decide phase of one run: the engine's one composition of the policy answers
 * (broker/decide.ts, the same the pipeline's default uses), this keeps the run's state around
 * it — the writes already sent, which approved digests are left, and the first destructive
 * request that needs a person (the run then pauses on it).
 */
import { maskKnownSecrets, redactSecrets } from '../audit/secret-shape.js';
import type { Outcome } from '../audit/types.js';
import { decideRequest } from '../broker/decide.js';
import type { RequestHead } from '../broker/types.js';
import {
  type ApprovalContext,
  BODY_PREVIEW_LIMIT,
  type Classification,
  type Decision,
  requestDigest,
  type Tier,
  type TierReason,
  type TierSource,
} from '../policy/index.js';
import { redactHost, redactPath } from '../audit/redact.js';
import {
  REVIEW_TARGET_LIMIT,
  type ReviewTarget,
  reviewTarget,
  type UnreviewableTarget,
} from '../audit/review-target.js';
import { errorMessage } from '../errors.js';
import type { NewApproval } from '../store/types.js';
import type { SentRequest } from './types.js';

/** What a paused run shows the person (already redacted): the approval less run, tool and arguments. */
export type PendingRequest = Pick<
  NewApproval,
  'digest' | 'method' | 'host' | 'path' | 'graphqlOperation' | 'bodyPreview'
>;

export interface Gate {
  decide(head: RequestHead, cls: Classification, body: Buffer | undefined): Promise<Decision>;
  readonly pending: PendingRequest | undefined;
  /**
   * Writes already sent when a destructive request was refused with
   * CLI_CONFIRMATION_AFTER_WRITE: the command stopped midway, so their outcome is unknown.
   */
  readonly unknownOutcomes: readonly SentRequest[];
  /** every write or destructive request the gate let through, in order (redacted) */
  readonly sent: readonly SentRequest[];
  /** from now on every request is refused with this (a record of the call could not be stored) */
  stop(refusal: Decision): void;
}

export interface GateInput {
  tier: Tier;
  context: ApprovalContext;
  runId: string;
  /** digests the host's approval flow says were approved for this command */
  approvedDigests: readonly string[];
  /** atomically consume an approved digest: the approval's id, or undefined when it was not (or no longer) approved */
  consume(digest: string): Promise<string | undefined>;
  /** give a consumed approval back: its request never reached the vendor */
  release(id: string): void;
  /** the connection's secrets: never in a preview */
  secrets: readonly string[];
  /** why the call has its tier and who chose it: a tier denial tells the agent what capped it */
  tierWhy?: { reason: TierReason; source?: TierSource };
}

/** A body a person can read: text, not compressed, within the preview limit. */
function preview(
  head: RequestHead,
  body: Buffer | undefined,
  secrets: readonly string[],
): { reviewable: boolean; text?: string } {
  if (body === undefined || body.length === 0) return { reviewable: true };
  if (body.length > BODY_PREVIEW_LIMIT) return { reviewable: false };
  const enc = head.headers['content-encoding'];
  if (enc && enc !== 'identity') return { reviewable: false };
  const text = body.toString('utf8');
  // invalid UTF-8 decodes to U+FFFD; NULs and other control bytes mean binary
  if (text.includes('\uFFFD') || /[\u0000-\u0008\u000e-\u001f]/.test(text)) return { reviewable: false };
  return { reviewable: true, text: maskKnownSecrets(redactSecrets(text), secrets) };
}

/** Why a target cannot be shown, in the words of the child's refusal. */
const TARGET_WHY: Record<UnreviewableTarget, string> = {
  'target-too-long': `longer than ${REVIEW_TARGET_LIMIT} characters`,
  'target-not-origin-form': 'not a plain path and query',
  'query-name-secret': 'a query parameter name looks like a secret',
};

export function createGate(input: GateInput): Gate {
  const approved = new Set(input.approvedDigests);
  const writes: SentRequest[] = [];
  const unknownOutcomes: SentRequest[] = [];
  let pending: PendingRequest | undefined;
  let stopped: Decision | undefined;
  return {
    get pending() {
      return pending;
    },
    unknownOutcomes,
    sent: writes,
    stop(refusal) {
      stopped ??= refusal;
    },
    async decide(head, cls, body) {
      // the only cost on an allowed request: one check
      if (stopped) return stopped;
      const destructive = cls.class === 'destructive';
      const digest = destructive
        ? requestDigest(head.method, head.host, head.target, body ?? Buffer.alloc(0))
        : undefined;
      const shown = destructive ? preview(head, body, input.secrets) : { reviewable: true };
      // the whole target, path and query, is what a person sees and approves (or nothing)
      const target: ReviewTarget | undefined = destructive ? reviewTarget(head.target) : undefined;
      // the body was fine, so an unreviewable answer is the target's: the child is told so
      const targetWhy = target?.ok === false && shown.reviewable ? target.why : undefined;
      const { verdict: d, decision: engine } = decideRequest(
        {
          class: cls.class,
          tier: input.tier,
          context: input.context,
          ...(digest ? { digest } : {}),
          approvedDigests: [...approved],
          writeAlreadySent: writes.length > 0,
          reviewable: shown.reviewable && target?.ok !== false,
        },
        cls,
        {
          ...(input.tierWhy ? { tier: input.tierWhy } : {}),
          sent: writes,
          ...(targetWhy ? { target: TARGET_WHY[targetWhy] } : {}),
        },
      );
      let settle: ((outcome: Outcome) => void) | undefined;
      if (d.decision === 'allow' && digest && approved.has(digest)) {
        // Single use: the digest is consumed before the request goes out, atomically in the
        // store, so two runs cannot both send it. It is given back when the request never
        // reached the vendor (the connection failed first): consumed means delivered, or maybe.
        approved.delete(digest);
        const id = await input.consume(digest);
        if (id === undefined) {
          return {
            decision: 'deny',
            code: 'POLICY_BLOCKED',
            policyCode: 'CLI_CONFIRMATION_REQUIRED',
            reason: errorMessage('CLI_CONFIRMATION_REQUIRED', { spent: true }),
          };
        }
        settle = (outcome) => {
          if (outcome !== 'not_sent') return;
          approved.add(digest);
          input.release(id);
        };
      }
      if (d.decision === 'allow' && cls.class !== 'read')
        writes.push({ method: head.method, host: redactHost(head.host), path: redactPath(head.target) });
      if (
        d.decision === 'deny' &&
        d.policyCode === 'CLI_CONFIRMATION_AFTER_WRITE' &&
        unknownOutcomes.length === 0
      )
        unknownOutcomes.push(...writes);
      if (d.decision === 'needs-approval' && pending === undefined) {
        const op = cls.graphql?.operations[0]?.name;
        pending = {
          digest: d.digest,
          method: head.method,
          host: head.host,
          // path and query: reviewTarget answered ok, or the decision would not need approval
          path: target?.ok ? target.shown : redactPath(head.target),
          ...(op ? { graphqlOperation: op } : {}),
          ...(shown.text !== undefined ? { bodyPreview: shown.text } : {}),
        };
      }
      return settle && engine.decision === 'allow' ? { ...engine, settle } : engine;
    },
  };
}
