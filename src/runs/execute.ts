/**
 * One call from its checked input to its result, as a sequence of steps:
 *
 *   refuse host-only arguments ─▶ prepare credentials from the connection (before any process)
 *   ─▶ a pinned image: check its name, verify its executable
 *   ─▶ the gate (tier, approvals) ─▶ the session, its audit events tapped (to the store, and
 *      the refusals counted) ─▶ the sandbox: preamble, then the CLI ─▶ close, settle
 *   ─▶ the result (outcome.ts), a pending approval created when it paused
 *
 * `runner.ts` wraps this with the call's start and its one execution event.
 */
import type { Logger } from 'pino';
import type { Broker, Session } from '../broker/broker.js';
import { optionInvalid } from '../broker/options.js';
import type { AuditEvent } from '../broker/types.js';
import type { InstallationTokens } from '../credentials/github-app.js';
import type { TokenMinter, TokenMinterOptions } from '../credentials/mint.js';
import { type PreparedCredentials, prepareCredentials } from '../credentials/stamper.js';
import type { Connection } from '../credentials/types.js';
import { brokerError } from '../errors.js';
import type { CliManifest } from '../manifest/types.js';
import { runSandboxed, type SandboxOptions, type SandboxResult } from '../sandbox/index.js';
import type { Store } from '../store/types.js';
import type { Call } from './call.js';
import { createGate, type Gate } from './gate.js';
import { maskOutput, recordingStamper } from './mask.js';
import { outcomeUnknown, runOutcome } from './outcome.js';
import { lostRecordRefusal, type StoreBreaker } from './store-guard.js';
import type { ChildOutput, RefusedRequest, RunBase, RunImage, RunInput, RunResult } from './types.js';

/** What a call needs of its runner: the engine, the store and what the runner's calls share. */
export interface RunnerParts {
  broker: Broker;
  store: Store;
  logger?: Logger;
  breaker: StoreBreaker;
  running: RunningGates;
  minterFor?: (connection: Connection) => TokenMinter | undefined;
  mint: TokenMinterOptions;
  installationTokens: InstallationTokens;
}

/** Arguments only the host may set; an agent passing them is refused. */
const HOST_ONLY_ARGS = ['cliTier', 'approvedRequestDigests'];

/**
 * The call's connection: as passed, or read now from its source. A source that throws refuses
 * the call before anything runs (the caller sees its error, the execution event its code).
 * The tier was resolved from the source's declared kind, so a connection read back of another
 * kind (a token credential behind a source that declared a key) is refused, never run at the
 * declared kind's tier.
 * @throws BrokerError RUN_INPUT_INVALID when the source's connection is not of its kind
 */
export async function connectionOf(input: Pick<RunInput, 'connection'>): Promise<Connection> {
  const c = input.connection;
  if (!('read' in c && typeof c.read === 'function')) return c as Connection;
  const read = await c.read();
  if (typeof read !== 'object' || read === null || read.kind !== c.kind)
    throw optionInvalid(
      'RUN_INPUT_INVALID',
      'connection.kind',
      `the connection source declared kind '${String(c.kind).slice(0, 64)}' and read a connection of another kind`,
    );
  return read;
}

/** A call's deadline when the input sets none. */
const DEFAULT_DEADLINE_MS = 270_000;

/** How long a closed session's last requests may take to reach their audit events. */
const SETTLE_MS = 1_000;

/** Runs one call's CLI under governance; throws for a call refused before it starts. */
export async function execute(parts: RunnerParts, call: Call, connection: Connection): Promise<RunResult> {
  refuseHostOnlyArgs(call.input);
  const prepared = prepare(parts, call, connection);
  try {
    const cli = prepared.plan.cli;
    call.cliId = cli.id;
    await checkImage(call.input.image, cli);
    const gate = gateFor(parts, call, prepared.secrets);
    const tap = auditTap(parts, call, gate);
    const stamped = new Set<string>(prepared.secrets);
    const sb = await runInSession(parts, call, prepared, gate, tap, stamped);
    const seen = tap.take();
    call.exit = { exitCode: sb.exitCode, signal: sb.signal };
    const masked = { stamped, own: new Set(prepared.secrets) };
    return await endOf(parts.store, call, resultBase(call, sb, seen, gate, masked), sb, gate);
  } finally {
    const grant = prepared.grant();
    if (grant) call.grant = grant;
    await prepared.close();
  }
}

/** `cliTier` or `approvedRequestDigests` in the agent's tool arguments: refused, nothing runs. */
export function refuseHostOnlyArgs(input: Pick<RunInput, 'context'>): void {
  const smuggled = HOST_ONLY_ARGS.filter(
    (k) => input.context.toolArgs && Object.hasOwn(input.context.toolArgs, k),
  );
  if (smuggled.length > 0) {
    throw brokerError(
      'INVALID_TOOL_INPUT',
      {
        reason: `${smuggled.join(' and ')} cannot be passed in the tool arguments; only the host sets them. Nothing was run.`,
      },
      { details: { fields: smuggled } },
    );
  }
}

/** The call's credentials: its plan, stamper, egress and preamble, before any process starts. */
function prepare(parts: RunnerParts, call: Call, connection: Connection): PreparedCredentials {
  const { input } = call;
  const minter = parts.minterFor?.(connection);
  return prepareCredentials({
    extension: input.extension,
    cliId: input.cli,
    connection,
    ...(input.endpoint ? { endpoint: input.endpoint } : {}),
    ...(minter ? { minter } : {}),
    mint: parts.mint,
    tier: call.tier.tier,
    installationTokens: parts.installationTokens,
  });
}

/**
 * A pinned image passed in must be the one the CLI's `binary.image` names (another name is a
 * wiring bug that would run one CLI's pinned program for another), and its executable must
 * still be the pinned one: a program that changed since the configuration pinned it never runs.
 */
export async function checkImage(
  image: RunImage | undefined,
  cli: Pick<CliManifest, 'binary'>,
): Promise<void> {
  if (!image) return;
  if (image.name !== cli.binary.image) {
    throw brokerError(
      'INTERNAL_ERROR',
      { reason: `the image passed in (${image.name.slice(0, 80)}) is not the one binary.image names` },
      { details: { image: image.name.slice(0, 80), binaryImage: cli.binary.image } },
    );
  }
  await image.verify?.();
}

/** The call's decide gate: its tier, its context and the approvals the host passed in. */
function gateFor(parts: RunnerParts, call: Call, secrets: readonly string[]): Gate {
  const { input, runId, tier } = call;
  const { store, logger } = parts;
  return createGate({
    tier: tier.tier,
    tierWhy: { reason: tier.reason, source: input.tier.requestedBy ?? 'caller' },
    context: input.context.kind,
    runId,
    approvedDigests: input.approvedRequestDigests ?? [],
    consume: async (digest) => (await store.consumeApproved(digest, runId))?.id,
    // Awaited with the run's other writes: the re-run after this one finds it approved again.
    release: (id) =>
      call.writes.push(
        store
          .releaseApproval(id)
          .catch((err: unknown) =>
            logger?.error({ err, runId }, 'clibroker: an undelivered request kept its approval consumed'),
          ),
      ),
    secrets,
  });
}

/** The requests and refusals a result reports: what the session audited until the result was taken. */
export interface Seen {
  requests: number;
  refusals: RefusedRequest[];
}

/** The session's audit sink for one call: every event to the store; until taken, counted for the result. */
export interface AuditTap {
  onAudit(e: AuditEvent): void;
  /** requests audited so far (a summary event counts for the refusals folded into it) */
  readonly requests: number;
  /** the result's view, taken once; an event audited later is stored and changes nothing in it */
  take(): Seen;
}

/**
 * Taps the session's audit events. A write the store refuses stops this call's gate and every
 * other running call's (no egress without its record) and opens the breaker.
 */
export function auditTap(
  parts: Pick<RunnerParts, 'store' | 'breaker' | 'running' | 'logger'>,
  call: Call,
  gate: Pick<Gate, 'stop'>,
): AuditTap {
  const seen: Seen = { requests: 0, refusals: [] };
  let taken = false;
  return {
    onAudit(e) {
      call.writes.push(
        parts.store.appendEvent(e).catch((err: unknown) => {
          // no egress without its record: the gate refuses the call's later requests
          if (call.lost++ === 0) {
            call.lostBy = err;
            parts.running.storeFailed(err, gate);
          }
          parts.breaker.failed(err);
          parts.logger?.error({ err, runId: call.runId }, 'clibroker: audit event not stored');
        }),
      );
      if (taken) return;
      seen.requests += e.folded ?? 1;
      if (e.decision === 'deny') seen.refusals.push(refusalOf(e));
    },
    get requests() {
      return seen.requests;
    },
    take() {
      taken = true;
      return { requests: seen.requests, refusals: [...seen.refusals] };
    },
  };
}

/** A refused request as the result names it; a summary event stands for the refusals folded into it. */
export function refusalOf(e: AuditEvent): RefusedRequest {
  return {
    code: e.code ?? 'POLICY_BLOCKED',
    ...(e.policyCode ? { policyCode: e.policyCode } : {}),
    message: e.reason,
    method: e.method,
    host: e.host,
    path: e.path,
    ...(e.folded ? { folded: e.folded } : {}),
  };
}

/**
 * Opens the call's broker session, runs the sandbox through it, closes it, and waits for the
 * last requests' audit events. The gate joins the running ones while the CLI runs, so a store
 * failure of another call stops it too.
 */
async function runInSession(
  parts: RunnerParts,
  call: Call,
  prepared: PreparedCredentials,
  gate: Gate,
  tap: AuditTap,
  stamped: Set<string>,
): Promise<SandboxResult> {
  const { input, runId, tier } = call;
  const cli = prepared.plan.cli;
  const deadlineMs = input.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const session = parts.broker.openSession({
    egress: prepared.egress,
    tier: tier.tier,
    credentials: recordingStamper(prepared.stamper, stamped),
    overrides: cli.wirePolicy?.overrides ?? [],
    labels: { runId, extensionId: input.extension.id, cliId: cli.id },
    // the sandbox kills the child at the deadline; the session outlives it by a little
    limits: { deadlineMs: deadlineMs + 5_000 },
    decide: gate.decide,
    onAudit: tap.onAudit,
  });
  let sb: SandboxResult;
  parts.running.add(gate);
  try {
    sb = await runSandboxed(sandboxOptions(input, cli, prepared, session, deadlineMs));
  } finally {
    session.close();
    parts.running.delete(gate);
  }
  await settled(session, () => tap.requests);
  return sb;
}

/**
 * What the sandbox runs: the pinned image's executable and profile, or the manifest's own —
 * never a silent fallback: isolated where bubblewrap cannot run is refused
 * (TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE), as for a pinned image.
 */
export function sandboxOptions(
  input: RunInput,
  cli: CliManifest,
  prepared: Pick<PreparedCredentials, 'preamble' | 'plan'>,
  session: Session,
  deadlineMs: number,
): SandboxOptions {
  const image = input.image;
  return {
    ...(image
      ? {
          entrypoint: image.executable,
          image: image.profile,
          strictProfile: true,
          ...(image.readOnlyPaths ? { readOnlyPaths: image.readOnlyPaths } : {}),
          ...(image.hiddenPaths ? { hiddenPaths: image.hiddenPaths } : {}),
        }
      : { entrypoint: cli.binary.entrypoint, image: cli.binary.image, strictProfile: true }),
    args: input.args,
    ...(input.stdin !== undefined ? { stdin: Buffer.from(input.stdin) } : {}),
    ...(prepared.preamble ? { preamble: prepared.preamble } : {}),
    deadlineMs,
    session,
    ...(input.signal ? { signal: input.signal } : {}),
    childEnv: {
      cli,
      ...(prepared.plan.endpointHost ? { endpointHost: prepared.plan.endpointHost } : {}),
    },
  };
}

/**
 * Waits until every request the session admitted has been audited. Closing the session cuts
 * the requests still in flight, and the child may die while the broker is still deciding one:
 * those events belong in the result's refusals and in the store before the execution event.
 * Bounded, so a request the broker never audits cannot hang the call.
 */
async function settled(session: Session, audited: () => number): Promise<void> {
  const until = Date.now() + SETTLE_MS;
  while (audited() < session.stats.requests && Date.now() < until) await new Promise((r) => setTimeout(r, 2));
}

/** What every result carries: the run, its tier, what was sent and refused, and the output masked. */
export function resultBase(
  call: Pick<Call, 'runId' | 'tier' | 'started'>,
  sb: SandboxResult,
  seen: Seen,
  gate: Pick<Gate, 'unknownOutcomes' | 'sent' | 'pending'>,
  masked: { stamped: Iterable<string>; own: ReadonlySet<string> },
): RunBase & ChildOutput {
  return {
    runId: call.runId,
    cliTier: call.tier.tier,
    cliTierReason: call.tier.reason,
    profile: sb.profile,
    requests: seen.requests,
    refusals: seen.refusals,
    unknownOutcomes: [...gate.unknownOutcomes],
    outcomeUnknown: false,
    durationMs: Math.round(performance.now() - call.started),
    exitCode: sb.exitCode,
    signal: sb.signal,
    stdout: maskOutput(sb.stdout, masked.stamped, sb.truncated, masked.own),
    stderr: maskOutput(sb.stderr, masked.stamped, sb.truncated, masked.own),
    truncated: sb.truncated,
  };
}

/** How the call ended (outcome.ts decides); a paused one leaves its pending approval in the store. */
async function endOf(
  store: Store,
  call: Call,
  base: RunBase & ChildOutput,
  sb: SandboxResult,
  gate: Gate,
): Promise<RunResult> {
  const pending = gate.pending;
  const end = runOutcome({
    refusals: base.refusals,
    pending: pending !== undefined,
    exitCode: sb.exitCode,
    timedOut: sb.timedOut,
  });
  base.outcomeUnknown = outcomeUnknown(end, {
    unknownOutcomes: base.unknownOutcomes,
    writesSent: gate.sent.length,
  });
  switch (end.status) {
    case 'paused': {
      const { input, runId } = call;
      const approval = await store.createApproval({
        runId,
        ...pending!,
        tool: input.context.tool ?? `${call.cliId}_cli`,
        toolArgs: input.context.toolArgs ?? { args: input.args },
      });
      return { ...base, status: 'paused', approval };
    }
    case 'refused':
      return { ...base, status: 'refused', refusal: end.refusal };
    case 'timed_out':
      return { ...base, status: 'timed_out', code: end.code };
    case 'failed':
      return { ...base, status: 'failed', code: end.code };
    default:
      return { ...base, status: 'completed' };
  }
}

/**
 * The gates of the calls running now. A failed write of any call tells the runner the store
 * cannot take records: every running call's later requests are refused from then on, not only
 * the failing call's (each would otherwise send one more request before its own write failed).
 */
export class RunningGates {
  readonly #gates = new Set<Pick<Gate, 'stop'>>();
  add(gate: Pick<Gate, 'stop'>): void {
    this.#gates.add(gate);
  }
  delete(gate: Pick<Gate, 'stop'>): void {
    this.#gates.delete(gate);
  }
  /** `own`'s write failed: it and every other running gate refuse from now on */
  storeFailed(err: unknown, own: Pick<Gate, 'stop'>): void {
    own.stop(lostRecordRefusal(err, 'this call'));
    for (const g of this.#gates) if (g !== own) g.stop(lostRecordRefusal(err, 'another call'));
  }
}
