/**
 * Runs: an agent's argv goes in, a governed run of a real CLI comes out.
 *
 *   resolve the tier (from the input alone) ─▶ prepare credentials (before any process)
 *   ─▶ a pinned image: verify its executable ─▶ open a broker session (egress, tier, stamper, the run's decide gate, audit → store)
 *   ─▶ sandbox: preamble, then the CLI ─▶ close the session
 *   ─▶ result (outcome.ts): paused | refused | timed_out | failed (signal) | completed
 *   ─▶ exactly one extension.execution.succeeded / .failed with cliTier and cliTierReason,
 *      also for a call that threw before the CLI started
 *
 * The runner sits above the engine: the broker never imports it, so an embedder that only
 * wants the proxy does not load the sandbox or the store.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Broker, Session } from '../broker/broker.js';
import type { CredentialStamper, Decision } from '../broker/types.js';
import { prepareCredentials } from '../credentials/stamper.js';
import type { TokenMinter, TokenMinterOptions } from '../credentials/mint.js';
import { type InstallationGrant, InstallationTokens } from '../credentials/github-app.js';
import { type Connection, credentialKind } from '../credentials/types.js';
import { BrokerError, brokerError, isBrokerError } from '../errors.js';
import { resolveTier, type TierResolution } from '../policy/index.js';
import { runSandboxed } from '../sandbox/index.js';
import type { Approval, ExecutionEvent, Store } from '../store/types.js';
import { checkRunInput, checkRunnerOptions } from './check-input.js';
import { createGate } from './gate.js';
import { createStoreBreaker, lostEventsError, lostRecordRefusal } from './store-guard.js';
import { outcomeUnknown, outlived, runOutcome } from './outcome.js';
import type { RefusedRequest, RunInput, RunResult } from './types.js';

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

/** Arguments only the host may set; an agent passing them is refused. */
const HOST_ONLY_ARGS = ['cliTier', 'approvedRequestDigests'];

/** One call as the runner tracks it, from the first line of `run` to its execution event. */
interface Call {
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

/** How long a closed session's last requests may take to reach their audit events. */
const SETTLE_MS = 1_000;

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

/**
 * Values the stamper handed out that are shorter than this are not masked in output: every
 * short word would go. The connection's own secrets are masked whatever their length.
 */
const MASK_MIN = 6;

/**
 * Records every credential the stamper hands out (the whole header value and the part after
 * its scheme), so the result can mask them: a vendor that reflects the request (a debug
 * endpoint, an error page quoting the Authorization header) would otherwise show the child,
 * and so the agent, the real credential.
 */
function recordingStamper(s: CredentialStamper, seen: Set<string>): CredentialStamper {
  const record = (v: string | undefined): string | undefined => {
    if (v) {
      seen.add(v);
      const sp = v.indexOf(' ');
      if (sp > 0) seen.add(v.slice(sp + 1).trim());
    }
    return v;
  };
  return {
    ...s,
    authorizationFor(host) {
      const v = s.authorizationFor(host);
      return typeof v === 'string' || v === undefined ? record(v) : Promise.resolve(v).then(record);
    },
  };
}

/** A secret's first characters left at the end of cut output are dropped from this many on. */
const PREFIX_MIN = 4;

/**
 * `text` with every known secret replaced by a marker no longer than it (the output cap
 * holds). Output the cap cut (`truncated`) may end inside a secret: the part before the cut
 * is dropped too, or the agent would hold all of the secret but its last characters.
 */
function maskOutput(
  text: string,
  secrets: Iterable<string>,
  truncated: boolean,
  own: ReadonlySet<string>,
): string {
  let out = text;
  // longest first: a header value before the token inside it
  const known = [...secrets]
    .filter((x) => x.length >= MASK_MIN || (x.length > 0 && own.has(x)))
    .sort((a, b) => b.length - a.length);
  for (const k of known) {
    if (out.includes(k)) out = out.split(k).join(k.length >= 10 ? '[REDACTED]' : '*'.repeat(k.length));
  }
  if (!truncated) return out;
  let cut = 0;
  for (const k of known) {
    for (let n = Math.min(k.length - 1, out.length); n >= PREFIX_MIN && n > cut; n--) {
      if (out.endsWith(k.slice(0, n))) {
        cut = n;
        break;
      }
    }
  }
  return cut > 0 ? out.slice(0, out.length - cut) : out;
}

/** The failure code a result records on its execution event (none for completed). */
function resultCode(r: RunResult): string | undefined {
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

/**
 * A runner over one broker and one store.
 *
 * @throws BrokerError RUNNER_OPTIONS_INVALID; `run` and `resume` throw RUN_INPUT_INVALID for a
 *   malformed input (details.path names the field) before the call starts
 */
export function createRunner(opts: RunnerOptions): Runner {
  checkRunnerOptions(opts);
  const { broker, store, logger } = opts;
  const breaker = createStoreBreaker(store, logger);
  /**
   * The gates of the calls running now. A failed write of any call tells the runner the store
   * cannot take records: every running call's later requests are refused from then on, not
   * only the failing call's (each would otherwise send one more request before its own write
   * failed).
   */
  const running = new Set<{ stop(refusal: Decision): void }>();
  function storeFailed(err: unknown, own: { stop(refusal: Decision): void }): void {
    own.stop(lostRecordRefusal(err, 'this call'));
    for (const g of running) if (g !== own) g.stop(lostRecordRefusal(err, 'another call'));
  }
  // Minters the runner creates send through the broker's own upstream (its resolve and CA),
  // so a host that routes the broker routes the token endpoint too; a host that gave them a
  // dispatcher or a CA of their own keeps it.
  // The broker's dispatcher starts (and loads undici) when read: only a minter created for
  // an OAuth call reads it, so a run with a plain token never pays for it.
  const mint: TokenMinterOptions =
    opts.mint?.dispatcher !== undefined || opts.mint?.ca !== undefined
      ? opts.mint
      : Object.defineProperty({ ...opts.mint }, 'dispatcher', {
          get: () => broker.dispatcher,
          enumerable: true,
        });
  // GitHub App installation tokens, cached for the runner's life per installation, tier and
  // repository set: two calls at one tier mint once; the tiers never share a token.
  const installationTokens = new InstallationTokens(mint);

  /** Runs one call and records its execution event; `refuse` may refuse it before anything runs. */
  async function run(input: RunInput, refuse?: () => void): Promise<RunResult> {
    const started = performance.now();
    const runId = input.runId ?? randomUUID();
    // First, from the tier input and the credential's kind alone (it cannot fail): a call
    // refused before anything runs still records the tier it would have run at. An unknown
    // connection kind is no OAuth credential, so it resolves as a token would (read).
    const tier = resolveTier({
      ...input.tier,
      credentialKind: credentialKind(input.connection?.kind),
    });
    const call: Call = {
      input,
      runId,
      tier,
      started,
      cliId: String(input.cli).slice(0, 128),
      writes: [],
      lost: 0,
    };
    let result: RunResult | undefined;
    let failure: { err: unknown } | undefined;
    try {
      refuse?.();
      // after a failed write, no CLI starts before the store has taken a write again
      await breaker.check();
      result = await execute(call);
    } catch (err) {
      failure = { err };
    }
    await Promise.all(call.writes);
    // a call with a record missing fails with the store's code, whatever the CLI did
    if (call.lost > 0) {
      failure = { err: lostEventsError(call.lostBy, call.lost, lostDetails(call, result)) };
      result = undefined;
    }
    // Exactly one execution event per call, refusals before the CLI starts included; the
    // thrown error still reaches the caller unchanged.
    const event = executionEvent(call, result, failure?.err);
    try {
      await store.appendEvent(event);
      breaker.wrote();
    } catch (err) {
      breaker.failed(err);
      breaker.keep(event);
      if (!failure) throw lostEventsError(err, call.lost + 1, lostDetails(call, result));
      logger?.error({ err, runId }, 'clibroker: execution event not stored');
    }
    if (failure) throw failure.err;
    return result!;
  }

  /** What a call that lost events still tells its caller: its run and what the CLI printed (masked). */
  function lostDetails(call: Call, result?: RunResult): Record<string, unknown> {
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

  async function execute(call: Call): Promise<RunResult> {
    const { input, runId, tier } = call;
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
    const minter = opts.minterFor?.(input.connection);
    const prepared = prepareCredentials({
      extension: input.extension,
      cliId: input.cli,
      connection: input.connection,
      ...(input.endpoint ? { endpoint: input.endpoint } : {}),
      ...(minter ? { minter } : {}),
      mint,
      tier: tier.tier,
      installationTokens,
    });
    try {
      const cli = prepared.plan.cli;
      call.cliId = cli.id;
      const image = input.image;
      if (image) {
        // The host looks the image up by the CLI's binary.image: another name is a wiring bug
        // that would run one CLI's pinned program for another.
        if (image.name !== cli.binary.image) {
          throw brokerError(
            'INTERNAL_ERROR',
            { reason: `the image passed in (${image.name.slice(0, 80)}) is not the one binary.image names` },
            { details: { image: image.name.slice(0, 80), binaryImage: cli.binary.image } },
          );
        }
        // Before any process: a program that changed since the configuration pinned it never runs.
        await image.verify?.();
      }
      const labels = { runId, extensionId: input.extension.id, cliId: cli.id };
      const gate = createGate({
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
        secrets: prepared.secrets,
      });
      const stamped = new Set<string>(prepared.secrets);
      const own: ReadonlySet<string> = new Set(prepared.secrets);
      const refusals: RefusedRequest[] = [];
      let requests = 0;
      // Set once the result is taken: an event audited later is stored, and changes nothing in it.
      let taken = false;
      const deadlineMs = input.deadlineMs ?? 270_000;
      const session = broker.openSession({
        egress: prepared.egress,
        tier: tier.tier,
        credentials: recordingStamper(prepared.stamper, stamped),
        overrides: cli.wirePolicy?.overrides ?? [],
        labels,
        // the sandbox kills the child at the deadline; the session outlives it by a little
        limits: { deadlineMs: deadlineMs + 5_000 },
        decide: gate.decide,
        onAudit: (e) => {
          call.writes.push(
            store.appendEvent(e).catch((err: unknown) => {
              // no egress without its record: the gate refuses the call's later requests
              if (call.lost++ === 0) {
                call.lostBy = err;
                storeFailed(err, gate);
              }
              breaker.failed(err);
              logger?.error({ err, runId }, 'clibroker: audit event not stored');
            }),
          );
          if (taken) return;
          // a summary event stands for the refusals folded into it
          requests += e.folded ?? 1;
          if (e.decision === 'deny')
            refusals.push({
              code: e.code ?? 'POLICY_BLOCKED',
              ...(e.policyCode ? { policyCode: e.policyCode } : {}),
              message: e.reason,
              method: e.method,
              host: e.host,
              path: e.path,
              ...(e.folded ? { folded: e.folded } : {}),
            });
        },
      });
      let sb: Awaited<ReturnType<typeof runSandboxed>>;
      running.add(gate);
      try {
        sb = await runSandboxed({
          ...(image
            ? {
                entrypoint: image.executable,
                image: image.profile,
                strictProfile: true,
                ...(image.readOnlyPaths ? { readOnlyPaths: image.readOnlyPaths } : {}),
                ...(image.hiddenPaths ? { hiddenPaths: image.hiddenPaths } : {}),
              }
            : // the manifest's profile, never a silent fallback: isolated where bubblewrap cannot
              // run is refused (TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE), as for a pinned image
              { entrypoint: cli.binary.entrypoint, image: cli.binary.image, strictProfile: true }),
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
        });
      } finally {
        session.close();
        running.delete(gate);
      }
      await settled(session, () => requests);
      taken = true;
      call.exit = { exitCode: sb.exitCode, signal: sb.signal };
      const base = {
        runId,
        cliTier: tier.tier,
        cliTierReason: tier.reason,
        profile: sb.profile,
        requests,
        refusals: [...refusals],
        unknownOutcomes: [...gate.unknownOutcomes],
        outcomeUnknown: false,
        durationMs: Math.round(performance.now() - call.started),
        exitCode: sb.exitCode,
        signal: sb.signal,
        stdout: maskOutput(sb.stdout, stamped, sb.truncated, own),
        stderr: maskOutput(sb.stderr, stamped, sb.truncated, own),
        truncated: sb.truncated,
      };
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
          const approval = await store.createApproval({
            runId,
            ...pending!,
            tool: input.context.tool ?? `${cli.id}_cli`,
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
    } finally {
      const grant = prepared.grant();
      if (grant) call.grant = grant;
      await prepared.close();
    }
  }

  /** The call's one `extension.execution.*` event: from its result, or from what it threw. */
  function executionEvent(call: Call, result: RunResult | undefined, failure: unknown): ExecutionEvent {
    const code = result
      ? resultCode(result)
      : isBrokerError(failure)
        ? (failure.policyCode ?? failure.code)
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
      ...(result && result.unknownOutcomes.length > 0
        ? { unknownOutcomes: [...result.unknownOutcomes] }
        : {}),
      ...(result?.status === 'completed' && result.refusals.length > 0
        ? { outlivedRefusals: result.refusals.map(outlived) }
        : {}),
      ...(call.lost > 0 ? { lostEvents: call.lost } : {}),
      ...(call.grant ? { mintedToken: call.grant } : {}),
      durationMs,
    };
  }

  return {
    run: async (input) => {
      checkRunInput(input);
      return run(input);
    },
    approve: (id, who) => store.approve(id, who),
    reject: (id, who) => store.reject(id, who),
    checkStore: () => breaker.check(),
    async resume(id, input) {
      checkRunInput(input);
      const approval = await store.getApproval(id);
      // A refused resume is a call too: its execution event goes under the approval's run.
      const again = approval
        ? { ...input, runId: approval.runId, approvedRequestDigests: [approval.digest] }
        : input;
      return run(again, () => {
        if (!approval) throw new BrokerError('APPROVAL_NOT_FOUND');
        if (approval.status === 'rejected') {
          throw brokerError('EXEC_ACTION_CONFIRMATION_DECLINED', { approval });
        }
        if (approval.status !== 'approved')
          throw brokerError('APPROVAL_NOT_PENDING', { id, status: approval.status });
      });
    },
  };
}

/**
 * What the execution event records of the argv: its digest, never the argv (it may carry
 * secrets or personal data), so a receipt can show which command ran without storing it.
 * sha256, lower-case hex, of the argv as a JSON array of strings.
 */
function argvDigest(args: readonly string[]): string {
  return createHash('sha256').update(JSON.stringify(args)).digest('hex');
}
