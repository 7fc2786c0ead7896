/**
 * An approval as a reviewer sees it, over the API and on the review page. The request's
 * fields and body preview are stored already redacted and bounded; the agent's arguments
 * and stdin are the call as it was made, so they are shown redacted (secret-shaped
 * substrings replaced) and the stdin only as a bounded preview.
 */
import { redactSecrets } from '../audit/secret-shape.js';
import type { Approval } from '../store/types.js';
import { EXPIRED_BY, WITHDRAWN_BY } from './hold.js';

/** The most of the agent's stdin shown (characters), before redaction. */
export const STDIN_PREVIEW_CHARS = 2048;
/** … and of one argument. */
export const ARG_PREVIEW_CHARS = 1024;

const bounded = (s: string, n: number): string => redactSecrets(s.length > n ? `${s.slice(0, n)}…` : s);

export interface ApprovalView {
  id: string;
  /** `expired` / `withdrawn`: rejected by the server, not by a person */
  status: Approval['status'] | 'expired' | 'withdrawn';
  createdAt: string;
  decidedAt?: string;
  decidedBy?: string;
  consumedAt?: string;
  runId: string;
  request: { method: string; host: string; path: string; graphqlOperation?: string; bodyPreview?: string };
  tool: string;
  args: string[];
  stdinPreview?: string;
  stdinBytes?: number;
}

export function approvalView(a: Approval): ApprovalView {
  const input = (typeof a.toolArgs === 'object' && a.toolArgs !== null ? a.toolArgs : {}) as Record<
    string,
    unknown
  >;
  const args = Array.isArray(input['args'])
    ? input['args'].slice(0, 256).map((x) => bounded(String(x), ARG_PREVIEW_CHARS))
    : [];
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
    ...(a.decidedBy ? { decidedBy: a.decidedBy } : {}),
    ...(a.consumedAt ? { consumedAt: a.consumedAt } : {}),
    runId: a.runId,
    request: {
      method: a.method,
      host: a.host,
      path: a.path,
      ...(a.graphqlOperation ? { graphqlOperation: a.graphqlOperation } : {}),
      ...(a.bodyPreview !== undefined ? { bodyPreview: a.bodyPreview } : {}),
    },
    tool: a.tool,
    args,
    ...(stdin !== undefined
      ? {
          stdinPreview: bounded(stdin, STDIN_PREVIEW_CHARS),
          stdinBytes: Buffer.byteLength(stdin),
        }
      : {}),
  };
}
