/**
 * One call as the runner tracks it, from the first line of `run` to its execution event, and
 * that one `extension.execution.*` event: built from the call's result, or from what it threw.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { InstallationGrant } from '../credentials/github-app.js';
import { credentialKind } from '../credentials/types.js';
import { isBrokerError } from '../errors.js';
import { resolveTier, type TierResolution } from '../policy/index.js';
import type { ExecutionEvent } from '../store/types.js';
import { outlived } from './outcome.js';
import type { RunInput, RunResult } from './types.js';

/** One call: its input, its run, its tier and what the runner learns of it on the way. */
export interface Call {
  input: RunInput;
  runId: string;
  tier: TierResolution;
  started: number;
  /** the manifest's CLI id once known; what the caller asked for before */
  cliId: string;
  /** store writes of the call's egress events, awaited before its execution event */
  writes: Promise<unknown>[];
  /** the call's events the store could not take, and the first such failure */
  lost: number;
  lostBy?: unknown;
  exit?: { exitCode: number | null; signal: NodeJS.Signals | null };
  /** the grant of the installation token the call was stamped with (a GitHub App) */
  grant?: InstallationGrant;
}

/** How a call ended: with a result, or with what it threw (which reaches the caller unchanged). */
export type Ended = { ok: true; result: RunResult } | { ok: false; err: unknown };

/**
 * A call begins: its run id, and its tier from the tier input and the credential's kind alone
 * (it cannot fail), so a call refused before anything runs still records the tier it would
 * have run at. An unknown connection kind is no OAuth credential: it resolves as a token would.
 */
export function startCall(input: RunInput): Call {
  const started = performance.now();
  return {
    input,
    runId: input.runId ?? randomUUID(),
    tier: resolveTier({ ...input.tier, credentialKind: credentialKind(input.connection?.kind) }),
    started,
    cliId: String(input.cli).slice(0, 128),
    writes: [],
    lost: 0,
  };
}

/** The failure code a result records on its execution event (none for completed). */
export function resultCode(r: RunResult): string | undefined {
  switch (r.status) {
    case 'refused':
      return r.refusal.policyCode ?? r.refusal.code;
    case 'paused':
      return 'CLI_APPROVAL_PENDING';
    case 'timed_out':
    case 'failed':
      return r.code;
    default:
      return undefined;
  }
}

/** What a call that lost events still tells its caller: its run and what the CLI printed (masked). */
export function lostDetails(call: Call, result?: RunResult): Record<string, unknown> {
  return {
    runId: call.runId,
    cliTier: call.tier.tier,
    cliTierReason: call.tier.reason,
    ...(result
      ? {
          exitCode: result.exitCode,
          signal: result.signal,
          stdout: result.stdout,
          stderr: result.stderr,
          truncated: result.truncated,
        }
      : call.exit
        ? { exitCode: call.exit.exitCode, signal: call.exit.signal }
        : {}),
  };
}

/** The call's one `extension.execution.*` event: from its result, or from what it threw. */
export function executionEvent(call: Call, ended: Ended): ExecutionEvent {
  const result = ended.ok ? ended.result : undefined;
  const code = ended.ok
    ? resultCode(ended.result)
    : isBrokerError(ended.err)
      ? (ended.err.policyCode ?? ended.err.code)
      : 'INTERNAL_ERROR';
  const durationMs = result?.durationMs ?? Math.round(performance.now() - call.started);
  return {
    type: result?.status === 'completed' ? 'extension.execution.succeeded' : 'extension.execution.failed',
    time: new Date().toISOString(),
    runId: call.runId,
    extensionId: String(call.input.extension?.id ?? '-'),
    cliId: call.cliId,
    cliTier: call.tier.tier,
    cliTierReason: call.tier.reason,
    ...(Array.isArray(call.input.args) ? { argvDigest: argvDigest(call.input.args) } : {}),
    ...(typeof call.input.context?.tool === 'string' ? { tool: call.input.context.tool } : {}),
    ...(call.exit?.exitCode != null ? { exitCode: call.exit.exitCode } : {}),
    ...(call.exit?.signal ? { signal: call.exit.signal } : {}),
    ...(code ? { code } : {}),
    ...(result?.outcomeUnknown ? { outcome: 'unknown' as const } : {}),
    ...(result && result.unknownOutcomes.length > 0 ? { unknownOutcomes: [...result.unknownOutcomes] } : {}),
    ...(result?.status === 'completed' && result.refusals.length > 0
      ? { outlivedRefusals: result.refusals.map(outlived) }
      : {}),
    ...(call.lost > 0 ? { lostEvents: call.lost } : {}),
    ...(call.grant ? { mintedToken: call.grant } : {}),
    durationMs,
  };
}

/**
 * What the execution event records of the argv: its digest, never the argv (it may carry
 * secrets or personal data), so a receipt can show which command ran without storing it.
 * sha256, lower-case hex, of the argv as a JSON array of strings.
 */
export function argvDigest(args: readonly string[]): string {
  return createHash('sha256').update(JSON.stringify(args)).digest('hex');
}
