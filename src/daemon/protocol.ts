/**
 * The daemon's wire protocol, shared by the server and the thin client: the routes, the
 * answer envelope and the default socket. Plain data (its one import is a type), so the client
 * that `clibroker run` loads stays small. docs/daemon.md describes it.
 */

/** Where `clibroker run` looks for the daemon when neither --socket nor $CLIBROKER_SOCKET says. */
export const DEFAULT_SOCKET = '/run/clibroker/broker.sock';

export const ROUTES = {
  health: '/healthz',
  tools: '/v1/tools',
  execute: '/v1/tools/execute',
} as const;

/** `/v1/approvals/{id}/resume`; the id is percent-encoded. */
export function resumePath(approvalId: string): string {
  return `/v1/approvals/${encodeURIComponent(approvalId)}/resume`;
}

/** What the daemon answers when a call failed (the front doors' one form): a catalogue code, never a stack. */
export type { WireError } from '../front/wire.js';
import type { WireError } from '../front/wire.js';

/** Every answer of the daemon, whatever the HTTP status. */
export type Reply<T = unknown> = { ok: true; result: T } | { ok: false; error: WireError };

/** The body of `POST /v1/tools/execute`: exactly these two keys. */
export interface ExecuteBody {
  /** a tool name (`gh_cli`) or id (`github:cli:gh`) */
  toolId: string;
  /** `{args, stdin?}`, passed to the host as is (the host validates it) */
  input: unknown;
}

/** What `clibroker run` and `clibroker resume` answer with: the run, without the host's internals. */
export interface RunAnswer {
  exitCode: number;
  stdout: string;
  stderr: string;
  truncated: boolean;
  runId: string;
  cliTier: string;
}

/** The execute route's `result` as `run` and `resume` show it: these six fields, in this order. */
export function runAnswer(out: RunAnswer): RunAnswer {
  const { exitCode, stdout, stderr, truncated, runId, cliTier } = out;
  return { exitCode, stdout, stderr, truncated, runId, cliTier };
}
