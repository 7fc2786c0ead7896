/**
 * An approval as a reviewer sees it, over the API and on the review page. The request's
 * fields and body preview are stored already redacted and bounded (the target whole, path
 * and query); the agent's arguments and stdin are the call as it was made, so they are shown
 * redacted (secret-shaped substrings replaced) and the stdin only as a bounded preview. Every
 * field is text for a person: characters that draw nothing or reorder the text around them
 * are written as escapes (`\u202E`, src/audit/visible.ts).
 */
import { redactSecrets } from '../audit/secret-shape.js';
import { showInvisible } from '../audit/visible.js';
import type { Approval } from '../store/types.js';
import { EXPIRED_BY, WITHDRAWN_BY } from './hold.js';

/** The most of the agent's stdin shown (characters), before redaction. */
export const STDIN_PREVIEW_CHARS = 2048;
/** … and of one argument. */
export const ARG_PREVIEW_CHARS = 1024;

/** The most of all the arguments of one approval shown together (characters). */
export const ARGS_PREVIEW_TOTAL_CHARS = 16384;
/**
 * Redacted first, then cut: a cut taken first could split a secret below the length its
 * shape is recognised at and show its head. What lies past the window is never shown.
 */
const REDACT_WINDOW = 4096;
const bounded = (s: string, n: number): string => {
  const shown = redactSecrets(s.length > n ? s.slice(0, n + REDACT_WINDOW) : s);
  return shown.length > n ? `${shown.slice(0, n)}…` : shown;
};

/** Every argument bounded, and all of them together too: a list of approvals stays small. */
function argsPreview(args: readonly unknown[]): string[] {
  const out: string[] = [];
  let left = ARGS_PREVIEW_TOTAL_CHARS;
  for (const [i, x] of args.entries()) {
    if (left <= 0) {
      out.push(`… (${args.length - i} more arguments not shown)`);
      break;
    }
    const shown = bounded(String(x), Math.min(ARG_PREVIEW_CHARS, left));
    left -= shown.length;
    out.push(shown);
  }
  return out;
}

export interface ApprovalView {
  id: string;
  /** `expired` / `withdrawn`: rejected by the server, not by a person */
  status: Approval['status'] | 'expired' | 'withdrawn';
  createdAt: string;
  decidedAt?: string;
  decidedBy?: string;
  consumedAt?: string;
  /** a call on some server waits for this pending approval now (that server's hold is live) */
  waiting?: true;
  runId: string;
  /** `path` is the whole target, path and query, secret-shaped values `{redacted}` */
  request: { method: string; host: string; path: string; graphqlOperation?: string; bodyPreview?: string };
  tool: string;
  args: string[];
  stdinPreview?: string;
  stdinBytes?: number;
}

/**
 * A status in the words a person reads it in: `consumed` is an approved request the command
 * has sent, `expired` and `withdrawn` were rejected by the server, not by a person.
 */
export function statusText(status: ApprovalView['status']): string {
  switch (status) {
    case 'consumed':
      return 'approved and sent';
    case 'approved':
      return 'approved, not sent yet';
    case 'expired':
      return 'expired: nobody decided in time';
    case 'withdrawn':
      return "withdrawn: the agent's call was cancelled";
    default:
      return status;
  }
}

/** The agent's input as kept with the approval: `{args, stdin?}`. */
function toolInput(a: Approval): Record<string, unknown> {
  return (typeof a.toolArgs === 'object' && a.toolArgs !== null ? a.toolArgs : {}) as Record<string, unknown>;
}

/** Bounded and redacted, before the escapes. */
function argsOf(a: Approval): string[] {
  const input = toolInput(a);
  return Array.isArray(input['args']) ? argsPreview(input['args'].slice(0, 256)) : [];
}

/**
 * The arguments as one JSON line for the page: escaped after JSON.stringify, so an escape
 * reads as JSON reads it (`"a\u202Eb"`) rather than as a doubled backslash.
 */
export function argsLine(a: Approval): string {
  return showInvisible(JSON.stringify(argsOf(a)));
}

const line = (s: string): string => showInvisible(s);
const lines = (s: string): string => showInvisible(s, { multiline: true });

export function approvalView(a: Approval): ApprovalView {
  const input = toolInput(a);
  const args = argsOf(a).map(line);
  const stdin = typeof input['stdin'] === 'string' ? input['stdin'] : undefined;
  const status =
    a.status === 'rejected' && a.decidedBy === EXPIRED_BY
      ? 'expired'
      : a.status === 'rejected' && a.decidedBy === WITHDRAWN_BY
        ? 'withdrawn'
        : a.status;
  return {
    id: a.id,
    status,
    createdAt: a.createdAt,
    ...(a.decidedAt ? { decidedAt: a.decidedAt } : {}),
    ...(a.decidedBy ? { decidedBy: line(a.decidedBy) } : {}),
    ...(a.consumedAt ? { consumedAt: a.consumedAt } : {}),
    ...(a.status === 'pending' && a.heldUntil !== undefined && Date.parse(a.heldUntil) > Date.now()
      ? { waiting: true as const }
      : {}),
    runId: a.runId,
    request: {
      method: line(a.method),
      host: line(a.host),
      path: line(a.path),
      ...(a.graphqlOperation ? { graphqlOperation: line(a.graphqlOperation) } : {}),
      ...(a.bodyPreview !== undefined ? { bodyPreview: lines(a.bodyPreview) } : {}),
    },
    tool: line(a.tool),
    args,
    ...(stdin !== undefined
      ? {
          stdinPreview: lines(bounded(stdin, STDIN_PREVIEW_CHARS)),
          stdinBytes: Buffer.byteLength(stdin),
        }
      : {}),
  };
}
