/**
 * Runs: an agent's argv goes in, a governed run of a real CLI comes out (DESIGN §1, §5, §7).
 *
 *   prepare credentials (bindings, before any process) ─▶ resolve the tier once
 *   ─▶ open a broker session (egress, tier, stamper, the run's decide gate, audit → store)
 *   ─▶ sandbox: preamble, then the CLI ─▶ close the session
 *   ─▶ result: paused (pending approval) | refused (the refusal wins) | timed_out | completed
 *   ─▶ extension.execution.succeeded / .failed with cliTier and cliTierReason
 *
 * The runner sits above the engine: the broker never imports it, so an embedder that only
 * wants the proxy does not load the sandbox or the store.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Broker } from '../broker/broker.js';
import { prepareCredentials } from '../credentials/stamper.js';
import type { TokenMinter, TokenMinterOptions } from '../credentials/mint.js';
import type { Connection } from '../credentials/types.js';
import { BrokerError } from '../errors.js';
import { type CredentialKind, resolveTier } from '../policy/index.js';
import { runSandboxed } from '../sandbox/index.js';
import type { Approval, Store } from '../store/types.js';
import { createGate } from './gate.js';
import type { RefusedRequest, RunInput, RunResult } from './types.js';

export interface RunnerOptions {
  broker: Broker;
  store: Store;
  logger?: Logger;
  /** share token minters (and their caches) across runs of the same application identity */
  minterFor?: (connection: Connection) => TokenMinter | undefined;
  /** options for minters the runner creates (extra CA, dispatcher for tests) */
  mint?: TokenMinterOptions;
}

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
}

/** Arguments only the host may set; an agent passing them is refused (DESIGN §5). */
const HOST_ONLY_ARGS = ['cliTier', 'approvedRequestDigests'];

const CREDENTIAL_KIND: Record<Connection['kind'], CredentialKind> = {
  oauth_client_credentials: 'oauth-client-credentials',
  oauth_access_token: 'oauth-access-token',
  api_key: 'api-key',
  bot_token: 'bot-token',
  basic: 'basic',
};

export function createRunner(opts: RunnerOptions): Runner {
  const { broker, store, logger } = opts;

  async function run(input: RunInput): Promise<RunResult> {
    const started = performance.now();
    const smuggled = HOST_ONLY_ARGS.filter((k) => input.context.toolArgs && Object.hasOwn(input.context.toolArgs, k));
    if (smuggled.length > 0) {
      throw new BrokerError('INVALID_TOOL_INPUT', { message: `INVALID_TOOL_INPUT: ${smuggled.join(' and ')} cannot be passed in the tool arguments; only the host sets them. Nothing was run.`, details: { fields: smuggled } });
    }
    const minter = opts.minterFor?.(input.connection);
    const prepared = prepareCredentials({ extension: input.extension, cliId: input.cli, connection: input.connection, ...(input.endpoint ? { endpoint: input.endpoint } : {}), ...(minter ? { minter } : {}), ...(opts.mint ? { mint: opts.mint } : {}) });
    const cli = prepared.plan.cli;
    const tier = resolveTier({ ...input.tier, credentialKind: CREDENTIAL_KIND[input.connection.kind] });
    const runId = input.runId ?? randomUUID();
    const labels = { runId, extensionId: input.extension.id, cliId: cli.id };
    const gate = createGate({
      tier: tier.tier,
      context: input.context.kind,
      runId,
      approvedDigests: input.approvedRequestDigests ?? [],
      consume: async (digest) => (await store.consumeApproved(digest, runId)) !== undefined,
      secrets: prepared.secrets,
    });
    const refusals: RefusedRequest[] = [];
    let requests = 0;
    const writes: Promise<unknown>[] = [];
    const deadlineMs = input.deadlineMs ?? 270_000;
    try {
      const session = broker.openSession({
        egress: prepared.egress,
        tier: tier.tier,
        credentials: prepared.stamper,
        overrides: cli.wirePolicy?.overrides ?? [],
        labels,
        // the sandbox kills the child at the deadline; the session outlives it by a little
        limits: { deadlineMs: deadlineMs + 5_000 },
        decide: gate.decide,
        onAudit: (e) => {
          requests++;
          writes.push(store.appendEvent(e).catch((err: unknown) => logger?.error({ err, runId }, 'clibroker: audit event not stored')));
          if (e.decision === 'deny') refusals.push({ code: e.code ?? 'POLICY_BLOCKED', ...(e.policyCode ? { policyCode: e.policyCode } : {}), message: e.reason, method: e.method, host: e.host, path: e.path });
        },
      });
      let sb: Awaited<ReturnType<typeof runSandboxed>>;
      try {
        sb = await runSandboxed({
          entrypoint: cli.binary.entrypoint,
          args: input.args,
          ...(input.stdin !== undefined ? { stdin: Buffer.from(input.stdin) } : {}),
          image: cli.binary.image,
          ...(prepared.preamble ? { preamble: prepared.preamble } : {}),
          deadlineMs,
          session,
          childEnv: { cli, ...(prepared.plan.endpointHost ? { endpointHost: prepared.plan.endpointHost } : {}) },
        });
      } finally {
        session.close();
      }
      const base = { runId, cliTier: tier.tier, cliTierReason: tier.reason, profile: sb.profile, requests, refusals, unknownOutcomes: [...gate.unknownOutcomes], durationMs: Math.round(performance.now() - started), exitCode: sb.exitCode, stdout: sb.stdout, stderr: sb.stderr, truncated: sb.truncated };
      // The refusal wins when the CLI failed (DESIGN §5); a CLI that shrugged a refusal off
      // (az's update check) completed, and the refusals are still listed.
      const refusal = sb.exitCode === 0 ? undefined : refusals[0];
      let result: RunResult;
      const pending = gate.pending;
      if (pending) {
        const approval = await store.createApproval({ runId, ...pending, tool: input.context.tool ?? `${cli.id}_cli`, toolArgs: input.context.toolArgs ?? { argv: input.args } });
        result = { ...base, status: 'paused', approval };
      } else if (refusal) {
        result = { ...base, status: 'refused', refusal };
      } else if (sb.timedOut) {
        result = { ...base, status: 'timed_out', code: 'CLI_TIMEOUT' };
      } else {
        result = { ...base, status: 'completed' };
      }
      await Promise.all(writes);
      await store.appendEvent({
        type: result.status === 'completed' ? 'extension.execution.succeeded' : 'extension.execution.failed',
        time: new Date().toISOString(),
        runId,
        extensionId: input.extension.id,
        cliId: cli.id,
        cliTier: tier.tier,
        cliTierReason: tier.reason,
        ...(sb.exitCode !== null ? { exitCode: sb.exitCode } : {}),
        ...(result.status === 'refused' ? { code: result.refusal.policyCode ?? result.refusal.code } : result.status === 'paused' ? { code: 'CLI_APPROVAL_PENDING' } : result.status === 'timed_out' ? { code: 'CLI_TIMEOUT' } : {}),
        durationMs: result.durationMs,
      });
      return result;
    } finally {
      await prepared.close();
    }
  }

  return {
    run,
    approve: (id, who) => store.approve(id, who),
    reject: (id, who) => store.reject(id, who),
    async resume(id, input) {
      const approval = await store.getApproval(id);
      if (!approval) throw new BrokerError('APPROVAL_NOT_FOUND');
      if (approval.status === 'rejected') {
        throw new BrokerError('EXEC_ACTION_CONFIRMATION_DECLINED', { message: `EXEC_ACTION_CONFIRMATION_DECLINED: ${approval.decidedBy ?? 'the reviewer'} rejected ${approval.method} ${approval.host}${approval.path}; it cannot be run.` });
      }
      if (approval.status !== 'approved') throw new BrokerError('APPROVAL_NOT_PENDING', { message: `APPROVAL_NOT_PENDING: approval ${id} is ${approval.status}, not approved; it cannot resume a run.` });
      return run({ ...input, runId: approval.runId, approvedRequestDigests: [approval.digest] });
    },
  };
}
