/**
 * Runs: an agent's argv goes in, a governed run of a real CLI comes out.
 *
 *   start the call: its run id and its tier (from the input alone)
 *   ─▶ its connection: as passed, or read now from its source (a host's secret files)
 *   ─▶ the call (execute.ts): credentials, the pinned image, the gate, the session, the sandbox,
 *      the result (outcome.ts): paused | refused | timed_out | failed (signal) | completed
 *   ─▶ its egress writes awaited; a lost one fails the call with the store's code
 *   ─▶ exactly one extension.execution.succeeded / .failed (call.ts) with cliTier and
 *      cliTierReason, also for a call that threw before the CLI started
 *
 * The runner sits above the engine: the broker never imports it, so an embedder that only
 * wants the proxy does not load the sandbox or the store.
 */
import type { Logger } from 'pino';
import type { Broker } from '../broker/broker.js';
import type { TokenMinter, TokenMinterOptions } from '../credentials/mint.js';
import { InstallationTokens } from '../credentials/github-app.js';
import type { Connection } from '../credentials/types.js';
import { BrokerError, brokerError } from '../errors.js';
import type { Approval, Store } from '../store/types.js';
import { type Call, type Ended, executionEvent, lostDetails, startCall } from './call.js';
import { checkRunInput, checkRunnerOptions } from './check-input.js';
import { connectionOf, execute, type RunnerParts, RunningGates } from './execute.js';
import { createStoreBreaker, lostEventsError } from './store-guard.js';
import type { RunInput, RunResult } from './types.js';

/** What `createRunner` takes: the broker to run through and the store that keeps approvals and audit. */
export interface RunnerOptions {
  broker: Broker;
  store: Store;
  logger?: Logger;
  /** share token minters (and their caches) across runs of the same application identity */
  minterFor?: (connection: Connection) => TokenMinter | undefined;
  /**
   * options for minters the runner creates; without a `dispatcher` or `ca` of their own they
   * send through the broker's upstream routing (`broker.dispatcher`)
   */
  mint?: TokenMinterOptions;
}

/** Runs vendor CLIs under governance: run, and the approval cycle of a paused run. */
export interface Runner {
  /** Runs the CLI once under governance. Failures before the CLI starts throw a BrokerError. */
  run(input: RunInput): Promise<RunResult>;
  /** A person approves a pending request (only from pending). */
  approve(approvalId: string, who: string): Promise<Approval>;
  /** A person rejects it; it can never be approved afterwards. */
  reject(approvalId: string, who: string): Promise<Approval>;
  /**
   * Re-runs the whole command of an approved approval once, with that one digest approved
   * (consumed atomically on first use). The host passes the same input again: the store
   * never holds the connection's secrets.
   */
  resume(approvalId: string, input: RunInput): Promise<RunResult>;
  /**
   * Whether calls can start: resolves while no audit write has failed; after one, writes the
   * events still owed (the probe every new call runs first) and resolves once the store takes
   * them. For health checks: a replica whose store refuses writes is not one to send calls to.
   * @throws BrokerError STORE_WRITE_FAILED or STORE_UNAVAILABLE while the store still refuses
   */
  checkStore(): Promise<void>;
}

/**
 * A runner over one broker and one store.
 *
 * @throws BrokerError RUNNER_OPTIONS_INVALID; `run` and `resume` throw RUN_INPUT_INVALID for a
 *   malformed input (details.path names the field) before the call starts
 */
export function createRunner(opts: RunnerOptions): Runner {
  checkRunnerOptions(opts);
  const parts = runnerParts(opts);
  const { store } = parts;
  return {
    run: async (input) => {
      checkRunInput(input);
      return runCall(parts, input);
    },
    approve: (id, who) => store.approve(id, who),
    reject: (id, who) => store.reject(id, who),
    checkStore: () => parts.breaker.check(),
    async resume(id, input) {
      checkRunInput(input);
      const approval = await store.getApproval(id);
      // A refused resume is a call too: its execution event goes under the approval's run.
      const again = approval
        ? { ...input, runId: approval.runId, approvedRequestDigests: [approval.digest] }
        : input;
      return runCall(parts, again, () => refuseResume(id, approval));
    },
  };
}

/** What the runner's calls share: the engine, the store, its breaker, the running gates and the minters. */
function runnerParts(opts: RunnerOptions): RunnerParts {
  const { broker, store, logger } = opts;
  const mint = mintOptions(opts);
  return {
    broker,
    store,
    ...(logger ? { logger } : {}),
    breaker: createStoreBreaker(store, logger),
    running: new RunningGates(),
    ...(opts.minterFor ? { minterFor: opts.minterFor } : {}),
    mint,
    // GitHub App installation tokens, cached for the runner's life per installation, tier and
    // repository set: two calls at one tier mint once; the tiers never share a token.
    installationTokens: new InstallationTokens(mint),
  };
}

/**
 * Minters the runner creates send through the broker's own upstream (its resolve and CA), so a
 * host that routes the broker routes the token endpoint too; a host that gave them a dispatcher
 * or a CA of their own keeps it. The broker's dispatcher starts (and loads undici) when read:
 * only a minter created for an OAuth call reads it, so a run with a plain token never pays for it.
 */
function mintOptions(opts: RunnerOptions): TokenMinterOptions {
  if (opts.mint?.dispatcher !== undefined || opts.mint?.ca !== undefined) return opts.mint;
  return Object.defineProperty({ ...opts.mint }, 'dispatcher', {
    get: () => opts.broker.dispatcher,
    enumerable: true,
  });
}

/** A resume goes ahead only for an approved approval. */
function refuseResume(id: string, approval: Approval | undefined): void {
  if (!approval) throw new BrokerError('APPROVAL_NOT_FOUND');
  if (approval.status === 'rejected') throw brokerError('EXEC_ACTION_CONFIRMATION_DECLINED', { approval });
  if (approval.status !== 'approved')
    throw brokerError('APPROVAL_NOT_PENDING', { id, status: approval.status });
}

/**
 * One call, start to execution event: `refuse` may refuse it before anything runs. Exactly one
 * execution event per call, refusals before the CLI starts included; what the call threw still
 * reaches the caller unchanged.
 */
export async function runCall(parts: RunnerParts, input: RunInput, refuse?: () => void): Promise<RunResult> {
  const call = startCall(input);
  let ended = await attempt(parts, call, refuse);
  await Promise.all(call.writes);
  ended = lostEventsFail(call, ended);
  await recordExecution(parts, call, ended);
  if (!ended.ok) throw ended.err;
  return ended.result;
}

/**
 * The call itself: its connection read first (a secret that cannot be read refuses it before
 * anything else is checked), then refused, or run; after a failed write, no CLI starts before
 * the store takes a write again.
 */
async function attempt(parts: RunnerParts, call: Call, refuse?: () => void): Promise<Ended> {
  try {
    const connection = await connectionOf(call.input);
    refuse?.();
    await parts.breaker.check();
    return { ok: true, result: await execute(parts, call, connection) };
  } catch (err) {
    return { ok: false, err };
  }
}

/** A call with a record missing fails with the store's code, whatever the CLI did. */
export function lostEventsFail(call: Call, ended: Ended): Ended {
  if (call.lost === 0) return ended;
  return {
    ok: false,
    err: lostEventsError(call.lostBy, call.lost, lostDetails(call, ended.ok ? ended.result : undefined)),
  };
}

/**
 * Stores the call's execution event. A store that refuses it opens the breaker, which keeps the
 * event for the probe; a call that otherwise succeeded then fails with the store's code.
 */
async function recordExecution(parts: RunnerParts, call: Call, ended: Ended): Promise<void> {
  const event = executionEvent(call, ended);
  try {
    await parts.store.appendEvent(event);
    parts.breaker.wrote();
  } catch (err) {
    parts.breaker.failed(err);
    parts.breaker.keep(event);
    if (ended.ok) throw lostEventsError(err, call.lost + 1, lostDetails(call, ended.result));
    parts.logger?.error({ err, runId: call.runId }, 'clibroker: execution event not stored');
  }
}
