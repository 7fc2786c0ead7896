/**
 * Approval held inside the call. In an agent step with a person, a destructive request does
 * not end the call with CLI_APPROVAL_PENDING: the call waits for a person, then
 *
 *   approved ─▶ the whole command runs again once with that one request approved (host.resume)
 *   rejected ─▶ EXEC_ACTION_CONFIRMATION_DECLINED
 *   no decision within the approval timeout ─▶ the approval expires (rejected by EXPIRED_BY,
 *     so it can never be approved later) ─▶ SERVE_APPROVAL_TIMEOUT
 *   the client cancels ─▶ the approval is withdrawn the same way ─▶ SERVE_CALL_CANCELLED
 *   the server stops ─▶ SERVE_STOPPED; the approval stays pending in the store
 *
 * A decision made through this server wakes the call at once; so does one made by another
 * process over the same PostgreSQL store (another replica's page or API, `clibroker approvals
 * approve`), which the store hears by LISTEN/NOTIFY. Polling the store stays as the fallback:
 * a notice lost while the listening connection was down, or a decision by another process
 * over SQLite, is seen within `pollMs`.
 */
import type { Logger } from 'pino';
import { redactLogFields } from '../audit/logger.js';
import { BrokerError, brokerError, isBrokerError } from '../errors.js';
import type { CallControl, CallOptions, ToolHost, ToolOutput } from '../host/types.js';
import type { Approval, ExecutionEvent, Store } from '../store/types.js';

/** Who an approval is rejected by when nobody decided it in time. */
export const EXPIRED_BY = 'clibroker:expired';
/** … and when the call that waited for it was cancelled. */
export const WITHDRAWN_BY = 'clibroker:cancelled';

/** How long a server's hold on an approval lasts unless it renews it (every HOLD_RENEW_MS). */
export const HOLD_LEASE_MS = 6_000;
const HOLD_RENEW_MS = 2_000;

/** What a waiting call tells its client (MCP progress). */
export interface WaitNotice {
  approvalId: string;
  reviewUrl: string;
  request: { method: string; host: string; path: string; graphqlOperation?: string };
}

export interface HoldOptions {
  approvalTimeoutMs: number;
  /** `${origin}/review` */
  reviewUrl: string;
  /** how often the store is read for decisions made elsewhere (default 500 ms) */
  pollMs?: number;
  logger?: Logger;
}

export interface CallHooks {
  /** the client went away or cancelled */
  signal?: AbortSignal;
  /** the call starts waiting for a person */
  onWait?(notice: WaitNotice): void;
}

export interface Holder {
  /** host.runTool, holding for a person where the context allows it */
  run(tool: string, input: unknown, opts: Required<CallOptions>, hooks?: CallHooks): Promise<ToolOutput>;
  /** a decision made through this server: the waiting call wakes now */
  decided(approvalId: string): void;
  /** the ids of approvals a call is waiting for now */
  waiting(): string[];
  /** every waiting call ends with SERVE_STOPPED; later calls still run but do not wait */
  stop(): void;
}

const sleep = (ms: number, wake: Set<() => void>): Promise<void> =>
  new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      wake.delete(done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    wake.add(done);
  });

/** What one holder's steps share: the host and store, its options, the waiting calls' wakers, whether it stopped. */
interface HoldState {
  host: ToolHost;
  store: Store;
  opts: HoldOptions;
  log: Logger | undefined;
  pollMs: number;
  /** per approval waited for: what wakes its call now */
  wakers: Map<string, Set<() => void>>;
  stopped: boolean;
}

export function createHolder(host: ToolHost, store: Store, opts: HoldOptions): Holder {
  const state: HoldState = {
    host,
    store,
    opts,
    log: opts.logger,
    pollMs: opts.pollMs ?? 500,
    wakers: new Map(),
    stopped: false,
  };
  // a decision anywhere over the store wakes the call that waits for it
  const unwatch = store.watchApprovals((id) => wakeAll(state, id));
  return {
    run: (tool, input, callOpts, hooks = {}) => heldRun(state, tool, input, callOpts, hooks),
    decided(id) {
      wakeAll(state, id);
    },
    waiting: () => [...state.wakers.keys()],
    stop() {
      state.stopped = true;
      unwatch();
      wakeAll(state);
    },
  };
}

/** Wakes the call waiting for `id` (every waiting call when none is named). */
function wakeAll(state: Pick<HoldState, 'wakers'>, id?: string): void {
  for (const [k, set] of state.wakers) if (id === undefined || k === id) for (const w of [...set]) w();
}

/**
 * host.runTool; a call that pauses for a person in an agent step waits for the decision, then
 * runs again approved (host.resume), or ends with the decision's code.
 */
async function heldRun(
  state: HoldState,
  tool: string,
  input: unknown,
  callOpts: Required<CallOptions>,
  hooks: CallHooks,
): Promise<ToolOutput> {
  const control = hooks.signal ? { signal: hooks.signal } : {};
  try {
    return await state.host.runTool(tool, input, callOpts, control);
  } catch (e) {
    if (hooks.signal?.aborted) throw await cancelled(state, tool, e);
    const paused = heldPause(e, callOpts);
    // a server that is stopping answers as before: the approval is pending, resume it later
    if (!paused || state.stopped) throw e;
    const { id, details, request } = paused;
    state.log?.info({ event: 'serve.approval.waiting', approvalId: id }, 'call waits for a person');
    hooks.onWait?.({
      approvalId: id,
      reviewUrl: `${state.opts.reviewUrl}#${encodeURIComponent(id)}`,
      request,
    });
    let a: Approval;
    try {
      a = await waitFor(state, id, hooks);
    } catch (err) {
      await audit(state, tool, details, err);
      throw err;
    }
    state.log?.info(
      { event: 'serve.approval.decided', approvalId: id, status: a.status, by: a.decidedBy },
      'the wait for a person ended',
    );
    return afterDecision(state, tool, a, request, control, hooks);
  }
}

/** The pending approval a call paused on, when this call may wait for it (an agent step with a person). */
export function heldPause(
  e: unknown,
  callOpts: Pick<CallOptions, 'context'>,
): { id: string; details: Record<string, unknown>; request: WaitNotice['request'] } | undefined {
  if (!isBrokerError(e) || e.code !== 'CLI_APPROVAL_PENDING' || callOpts.context !== 'agent-step')
    return undefined;
  const details = e.details ?? {};
  return { id: String(details['approvalId']), details, request: details['request'] as WaitNotice['request'] };
}

/** Approved: the whole command runs again with that one request approved; else the decision's code. */
async function afterDecision(
  state: HoldState,
  tool: string,
  a: Approval,
  request: WaitNotice['request'],
  control: CallControl,
  hooks: CallHooks,
): Promise<ToolOutput> {
  const id = a.id;
  if (a.status === 'approved') {
    try {
      return await state.host.resume(id, control);
    } catch (err) {
      if (hooks.signal?.aborted) throw await cancelled(state, tool, err);
      throw err;
    }
  }
  if (a.status === 'rejected')
    throw brokerError(
      'EXEC_ACTION_CONFIRMATION_DECLINED',
      { approval: a, held: true },
      { details: { approvalId: id, decidedBy: a.decidedBy, request } },
    );
  throw brokerError(
    'APPROVAL_NOT_PENDING',
    { id, status: a.status, held: true },
    { details: { approvalId: id, status: a.status } },
  );
}

/** Withdraw a pending approval (expiry, cancel); undefined when it was withdrawn, the approval when someone decided it first. */
async function withdraw(state: HoldState, id: string, by: string): Promise<Approval | undefined> {
  try {
    await state.host.reject(id, by);
    return undefined;
  } catch (e) {
    if (isBrokerError(e) && e.code === 'APPROVAL_NOT_PENDING') return state.store.getApproval(id);
    throw e;
  }
}

/**
 * The hold on the approval, as every server over the store sees it: until `now + HOLD_LEASE_MS`,
 * renewed every `HOLD_RENEW_MS` while the call waits; ended when the wait ends undecided. A
 * server that dies stops renewing, and its lease lapses. A lease not recorded is logged: the
 * call still waits, another server merely does not see it.
 */
async function hold(state: HoldState, id: string, on: boolean): Promise<void> {
  await state.store
    .holdApproval(id, on ? new Date(Date.now() + HOLD_LEASE_MS).toISOString() : null)
    .catch((e: unknown) =>
      state.log?.error({ err: redactLogFields(e), approvalId: id }, 'clibroker: approval hold not recorded'),
    );
}

/**
 * Waits for a person's decision on `id`: read the store, renew the hold when due, end the wait
 * undecided (stopped, cancelled, timed out), or sleep until woken or the next poll.
 */
async function waitFor(state: HoldState, id: string, hooks: CallHooks): Promise<Approval> {
  const deadline = Date.now() + state.opts.approvalTimeoutMs;
  const wake = new Set<() => void>();
  state.wakers.set(id, wake);
  const onAbort = (): void => {
    for (const w of [...wake]) w();
  };
  hooks.signal?.addEventListener('abort', onAbort);
  let renewed = 0;
  try {
    for (;;) {
      const a = await state.store.getApproval(id);
      if (!a) throw new BrokerError('APPROVAL_NOT_FOUND', { details: { approvalId: id } });
      if (a.status !== 'pending') return a;
      if (!state.stopped && Date.now() - renewed >= HOLD_RENEW_MS) {
        renewed = Date.now();
        await hold(state, id, true);
      }
      const left = deadline - Date.now();
      const ended = await undecidedEnd(state, id, hooks, left);
      if (ended) return ended;
      await sleep(Math.min(state.pollMs, left), wake);
    }
  } finally {
    hooks.signal?.removeEventListener('abort', onAbort);
    state.wakers.delete(id);
    // no call waits any more (a decided approval ignores it)
    await hold(state, id, false);
  }
}

/**
 * Whether the wait ends with no decision: the server stopped (SERVE_STOPPED, the approval stays
 * pending), the client cancelled (SERVE_CALL_CANCELLED) or the time is up
 * (SERVE_APPROVAL_TIMEOUT), the approval withdrawn in both. A person who decided just before
 * the withdrawal wins: their decision is returned. Undefined while the wait goes on.
 */
async function undecidedEnd(
  state: HoldState,
  id: string,
  hooks: CallHooks,
  left: number,
): Promise<Approval | undefined> {
  if (state.stopped) throw brokerError('SERVE_STOPPED', { approvalId: id }, { details: { approvalId: id } });
  if (hooks.signal?.aborted) {
    const late = await withdraw(state, id, WITHDRAWN_BY);
    if (late && late.status !== 'pending') return late;
    throw brokerError('SERVE_CALL_CANCELLED', { approvalId: id }, { details: { approvalId: id } });
  }
  if (left <= 0) {
    const late = await withdraw(state, id, EXPIRED_BY);
    if (late && late.status !== 'pending') return late;
    const ms = state.opts.approvalTimeoutMs;
    throw brokerError(
      'SERVE_APPROVAL_TIMEOUT',
      { approvalId: id, seconds: ms / 1000 },
      { details: { approvalId: id, approvalTimeoutMs: ms } },
    );
  }
  return undefined;
}

/** The call's end is audited: one more execution event for its run, with the code it ended with. */
async function audit(
  state: HoldState,
  tool: string,
  details: Record<string, unknown>,
  err: unknown,
): Promise<void> {
  await state.store
    .appendEvent(heldEndEvent(state.host, tool, details, err))
    .catch((e: unknown) =>
      state.log?.error({ err: redactLogFields(e) }, 'clibroker: execution event not stored'),
    );
}

/** The execution event of a held call's end: its run, its tool's extension and CLI, the code it ended with. */
export function heldEndEvent(
  host: Pick<ToolHost, 'tools'>,
  tool: string,
  details: Record<string, unknown>,
  err: unknown,
): ExecutionEvent {
  const listing = host.tools().find((t) => t.name === tool || t.id === tool);
  const [extensionId = '', , cliId] = (listing?.id ?? '').split(':');
  return {
    type: 'extension.execution.failed',
    time: new Date().toISOString(),
    runId: String(details['runId'] ?? ''),
    extensionId,
    ...(cliId ? { cliId } : {}),
    cliTier: details['cliTier'] === 'write' ? 'write' : 'read',
    cliTierReason: String(details['cliTierReason'] ?? ''),
    code: isBrokerError(err) ? err.code : 'INTERNAL_ERROR',
    ...(details['approvalId'] ? { labels: { approvalId: String(details['approvalId']) } } : {}),
  };
}

/**
 * A run the client cancelled: its process group was killed (CLI_EXITED_BY_SIGNAL from the
 * host); the call ends SERVE_CALL_CANCELLED, audited beside the run's own execution event.
 */
async function cancelled(state: HoldState, tool: string, e: unknown): Promise<BrokerError> {
  const details = isBrokerError(e) ? (e.details ?? {}) : {};
  const err = brokerError(
    'SERVE_CALL_CANCELLED',
    { killed: true },
    {
      details: {
        ...(details['runId'] ? { runId: details['runId'] } : {}),
        ...(isBrokerError(e) ? { cause: e.code } : {}),
      },
    },
  );
  if (details['runId']) await audit(state, tool, details, err);
  state.log?.info({ event: 'serve.call.cancelled', runId: details['runId'] }, 'call cancelled by its client');
  return err;
}
