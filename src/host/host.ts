/**
 * createHost: a loaded operator configuration, running its `<id>_cli` tools. One broker, one
 * runner and one store for the host's life; every call takes from the agent only `{args,
 * stdin?}`, and from the host only the requested tier and the context. Everything else — the
 * manifest, the connection and its secrets, the endpoint, the ceiling, the identity, the
 * assignment, the pinned program and its profile — comes from the configuration.
 *
 *   resolve the tool (offered? withheld?) ─▶ check the input ─▶ the store's assignment switch
 *   ─▶ runner.run with the pinned image and the connection, whose secrets it reads when the
 *      call starts
 *   ─▶ completed: {exitCode, stdout, stderr} │ anything else: a BrokerError with its code
 */
import type { Logger } from 'pino';
import type { Broker } from '../broker/broker.js';
import type { LoadedConfig, ConfiguredTool, WithheldTool } from '../config/types.js';
import { credentialKind } from '../credentials/types.js';
import { BrokerError, brokerError, type ErrorCode, isBrokerError, isErrorCode } from '../errors.js';
import { conformanceWithheld } from '../conformance/gate.js';
import { answerHelpFromTree, helpTreeFor } from '../help/index.js';
import type { HelpTree } from '../manifest/types.js';
import { resolveTier, type Tier } from '../policy/index.js';
import type { Runner, RunInput, RunResult } from '../runs/index.js';
import { outlived } from '../runs/outcome.js';
import type { Approval, ExecutionEvent, Store } from '../store/types.js';
import { redactSecrets } from '../audit/secret-shape.js';
import { checkCallOptions, checkToolInput } from './input.js';
import type { AuditPush } from './audit-push.js';
import { openConfiguredStore } from './store.js';
import type { CallControl, CallOptions, ToolHost, ToolInput, ToolListing, ToolOutput } from './types.js';

/** What `createHost` takes besides the loaded configuration. */
export interface HostOptions {
  logger?: Logger;
  /** an open store to use instead of opening the configuration's (the host does not close it) */
  store?: Store;
  /**
   * Offer CLIs whose image has profile plain. A plain CLI reads every file this process can,
   * so without this they are withheld (TOOL_VENDOR_CLI_PLAIN_NOT_ALLOWED): set it only when
   * every caller of this host is trusted with this process's files.
   */
  allowPlainProfile?: boolean;
}

/** A host over a loaded configuration. */
export interface Host extends ToolHost {
  readonly config: LoadedConfig;
  readonly store: Store;
  /** the CLIs of installed extensions that are not offered, and why */
  withheld(): WithheldTool[];
  /**
   * Whether calls can start (the runner's `checkStore`): after a failed audit write, the events
   * owed are written first, and this rejects while the store still refuses them.
   * @throws BrokerError STORE_WRITE_FAILED or STORE_UNAVAILABLE
   */
  checkStore(): Promise<void>;
}

/**
 * Start a host: open the store, start the broker (routed as the configuration's `upstream`
 * says), and withhold the CLIs whose isolated profile cannot run here.
 */
export async function createHost(config: LoadedConfig, opts: HostOptions = {}): Promise<Host> {
  const [{ createBroker }, { createRunner }, { isolationUnavailable }, { vendorCliTool }, { jsonSchema }] =
    await Promise.all([
      import('../broker/broker.js'),
      import('../runs/runner.js'),
      import('../sandbox/isolated.js'),
      import('../cli/vendor.js'),
      import('../cli/schema.js'),
    ]);
  const opened =
    opts.store ?? (await openConfiguredStore(config, opts.logger ? { logger: opts.logger } : {}));
  const ownStore = opts.store === undefined;
  // the collector gets a copy of every event this host appends, after the store has it
  const pushed = config.auditOtlp ? await startAuditPush(config, opened, opts.logger) : undefined;
  const push = pushed?.push;
  const store = pushed?.store ?? opened;

  const here = await offeredTools(config, isolationUnavailable, {
    allowPlainProfile: opts.allowPlainProfile === true,
  });
  // the conformance gate: an image that requires a verdict is offered only after a pass for
  // its sha256 is in the store. A store that cannot answer fails the start: nothing is offered.
  let gated: Awaited<ReturnType<typeof conformanceWithheld<ConfiguredTool>>>;
  try {
    gated = await conformanceWithheld(here.offered, store);
  } catch (e) {
    if (ownStore) await store.close();
    throw e;
  }
  const offered = gated.offered;
  const withheld: WithheldTool[] = [...here.withheld, ...gated.withheld];
  // all or nothing: under `strict` a tool this host would withhold refuses the start, as the
  // loader refuses a CLI with a problem of its own; a toolkit the operator disabled is no problem
  const problems = withheld
    .filter((w) => w.code !== 'TOOL_VENDOR_CLI_TOOLKIT_DISABLED')
    .map((w) => ({ code: w.code, path: w.id, message: w.message }));
  if (config.strict && problems.length > 0) {
    if (ownStore) await store.close();
    throw brokerError(
      'CONFIG_INVALID',
      { what: 'the strict configuration', problems, shown: 3 },
      { details: { problems } },
    );
  }

  const up = config.upstream;
  let broker: Broker;
  try {
    broker = await createBroker({
      ...(opts.logger ? { logger: opts.logger } : {}),
      upstream: {
        ...(up?.caPem ? { ca: up.caPem } : {}),
        ...(up && up.connectTo.size > 0 ? { resolve: (host: string) => up.connectTo.get(host) } : {}),
        ...(up?.allowAddresses.length ? { allowAddresses: up.allowAddresses } : {}),
      },
    });
  } catch (e) {
    if (ownStore) await store.close();
    throw e;
  }
  const runner: Runner = createRunner({ broker, store, ...(opts.logger ? { logger: opts.logger } : {}) });

  const listings: ToolListing[] = offered.map((t) => ({
    id: t.id,
    name: t.name,
    description: t.description,
    inputSchema: jsonSchema(
      vendorCliTool({ id: t.cliId, description: t.description }, () => undefined),
      'gadget',
    ) as Record<string, unknown>,
  }));

  const trees = new Map<string, HelpTree | undefined>();
  /** The manifest's own help tree, else the one shipped for the pinned program (gh, az, curl). */
  function helpTreeOf(tool: ConfiguredTool): HelpTree | undefined {
    if (!trees.has(tool.id)) {
      const cli = config.extensions.get(tool.extensionId)?.manifest.clis.find((c) => c.id === tool.cliId);
      trees.set(tool.id, helpTreeFor(cli?.helpTree, tool.image.executable));
    }
    return trees.get(tool.id);
  }

  function findTool(ref: unknown): ConfiguredTool {
    const name = typeof ref === 'string' ? ref : '';
    const hit = offered.find((t) => t.id === name || t.name === name);
    if (hit) return hit;
    const held = withheld.find((t) => t.id === name || t.name === name);
    if (held) {
      // the reason a host withholds a tool (the only one today); another would be not offered, its code in details
      if (held.code === 'TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE')
        throw brokerError(
          held.code,
          { tool: held.name, why: held.message },
          { details: { tool: held.name } },
        );
      throw brokerError(
        'TOOL_VENDOR_CLI_NOT_OFFERED',
        { withheld: held.name, why: held.message },
        { details: { tool: held.name, reasonCode: held.code } },
      );
    }
    const names = offered.map((t) => t.name);
    throw brokerError(
      'TOOL_VENDOR_CLI_NOT_OFFERED',
      { name: name.slice(0, 80), offered: names },
      { details: { tools: names } },
    );
  }

  /** Appends an execution event; a store that fails is logged, the call's own answer stands. */
  async function record(event: ExecutionEvent): Promise<void> {
    await store
      .appendEvent(event)
      .catch((e: unknown) => opts.logger?.error({ err: e }, 'clibroker: execution event not stored'));
  }

  /** The tier the call would have run at, as far as the host knows it before any runner. */
  async function tierOf(
    tool: ConfiguredTool | undefined,
    options: Required<CallOptions> | undefined,
  ): Promise<{ tier: Tier; reason: string }> {
    const ext = tool ? config.extensions.get(tool.extensionId) : undefined;
    if (!tool || !ext || !options) return NOT_RESOLVED;
    const assignmentAllow = await store
      .getAssignmentTier({ extensionId: ext.id, assignmentId: ext.assignment, cliId: tool.cliId })
      .catch(() => 'read' as const);
    return resolveTier({
      requested: options.cliTier,
      requestedBy: options.tierSource,
      organizationCeiling: config.ceiling,
      assignmentAllow,
      identity: ext.identity,
      credentialKind: credentialKind(ext.connection.kind),
    });
  }

  async function call(
    tool: ConfiguredTool,
    input: ToolInput,
    options: Required<CallOptions>,
    resumeOf?: Approval,
    control: CallControl = {},
  ): Promise<ToolOutput> {
    const ext = config.extensions.get(tool.extensionId);
    if (!ext) throw brokerError('INTERNAL_ERROR', { reason: `tool ${tool.id} has no installed extension` });
    // The store's switch for this tool is the audited gate, raised only by a person (`tiers set`).
    const assignmentAllow = await store.getAssignmentTier({
      extensionId: ext.id,
      assignmentId: ext.assignment,
      cliId: tool.cliId,
    });
    const runInput: RunInput = {
      extension: ext.manifest,
      cli: tool.cliId,
      args: input.args,
      ...(input.stdin !== undefined ? { stdin: input.stdin } : {}),
      // read by the runner when the call starts: a secret that cannot be read is a call it
      // refuses before anything runs, with its one execution event
      connection: { kind: ext.connection.kind, read: () => config.connection(ext.id) },
      ...(ext.endpoint !== undefined ? { endpoint: ext.endpoint } : {}),
      tier: {
        requested: options.cliTier,
        requestedBy: options.tierSource,
        organizationCeiling: config.ceiling,
        assignmentAllow,
        identity: ext.identity,
      },
      // what the reviewer sees, and all a resume needs: it re-runs exactly what was approved
      context: { kind: options.context, tool: tool.name, toolArgs: { ...input } },
      deadlineMs: config.deadlineMs,
      image: {
        name: tool.image.name,
        executable: tool.image.executable,
        profile: tool.image.profile,
        readOnlyPaths: tool.image.readOnlyPaths,
        hiddenPaths: config.hiddenPaths,
        verify: () => tool.image.verify(),
      },
    };
    const runId = resumeOf?.runId ?? crypto.randomUUID();
    const signal = control.signal ? { signal: control.signal } : {};
    const result = resumeOf
      ? await runner.resume(resumeOf.id, { ...runInput, runId, ...signal })
      : await runner.run({ ...runInput, runId, ...signal });
    return outcome(result);
  }

  return {
    config,
    store,
    withheld: () => [...withheld],
    tools: () => listings.map((l) => ({ ...l })),
    async runTool(ref, input, options, control) {
      const started = performance.now();
      let tool: ConfiguredTool | undefined;
      let opts: Required<CallOptions> | undefined;
      let checked: ToolInput;
      try {
        tool = findTool(ref);
        opts = checkCallOptions(options);
        checked = checkToolInput(input);
      } catch (err) {
        // refused before any runner: the call still leaves its execution event
        await record(hostEvent(ref, tool, await tierOf(tool, opts), started, err));
        throw err;
      }
      // `--help` on a command with subcommands is answered from the help tree: no sandbox, no session
      const tree = helpTreeOf(tool);
      const page = tree ? answerHelpFromTree(tree, checked.args, tool.cliId) : undefined;
      if (page !== undefined) {
        const answered: ToolOutput = {
          exitCode: 0,
          stdout: page,
          stderr: '',
          truncated: false,
          runId: crypto.randomUUID(),
          cliTier: 'read',
          cliTierReason: 'help-from-tree',
        };
        await record({
          ...hostEvent(ref, tool, { tier: 'read', reason: 'help-from-tree' }, started),
          runId: answered.runId,
        });
        return answered;
      }
      return call(tool, checked, opts, undefined, control);
    },
    async resume(approvalId, control) {
      const approval = await store.getApproval(String(approvalId));
      if (!approval) throw brokerError('APPROVAL_NOT_FOUND', { id: String(approvalId).slice(0, 64) });
      // The approval holds the call as the reviewer saw it (tool, args, stdin); a run could only
      // pause at tier write in an agent step with a person, so those are the options again.
      // Nothing is kept beside the store: any host over the same store can resume it.
      let input: ToolInput;
      try {
        input = checkToolInput(approval.toolArgs);
      } catch {
        throw brokerError(
          'APPROVAL_NOT_FOUND',
          { notResumable: approval.id },
          { details: { approvalId: approval.id } },
        );
      }
      const opts: Required<CallOptions> = { cliTier: 'write', context: 'agent-step', tierSource: 'caller' };
      let tool: ConfiguredTool;
      try {
        tool = findTool(approval.tool);
      } catch (err) {
        // the approval's tool is no longer offered: a refused call, under the approval's run
        await record({
          ...hostEvent(approval.tool, undefined, NOT_RESOLVED, performance.now(), err),
          runId: approval.runId,
        });
        throw err;
      }
      return call(tool, input, opts, approval, control);
    },
    approve: (id, who) => runner.approve(id, who),
    reject: (id, who) => runner.reject(id, who),
    checkStore: () => runner.checkStore(),
    async close() {
      await broker.close();
      await push?.close();
      if (ownStore) await store.close();
    },
  };
}

/**
 * The push of `audit.otlp`, its header values read at every POST like every secret, and the
 * store whose appends feed it. A store that cannot read its chain back (none today) pushes
 * nothing.
 */
async function startAuditPush(
  config: LoadedConfig,
  store: Store,
  logger: Logger | undefined,
): Promise<{ push: AuditPush; store: Store } | undefined> {
  const o = config.auditOtlp;
  const [{ AuditPush, pushingStore }, { isChainSource }] = await Promise.all([
    import('./audit-push.js'),
    import('../store/chain.js'),
  ]);
  if (!o || !isChainSource(store)) return undefined;
  const push = new AuditPush({
    endpoint: o.endpoint,
    batchSize: o.batchSize,
    flushIntervalMs: o.flushIntervalMs,
    maxQueue: o.maxQueue,
    retryForMs: o.retryForMs,
    timeoutMs: o.timeoutMs,
    source: store,
    headers: () => o.readHeaders(),
    ...(logger ? { logger } : {}),
  });
  return { push, store: pushingStore(store, push) };
}

/** The tier of a call refused before its tool or options were known. */
const NOT_RESOLVED = { tier: 'read', reason: 'not-resolved' } as const;

/**
 * The execution event of a call the host answered or refused itself: help from the tree, or a
 * refusal before any runner (a tool not offered, input or options refused). The name the
 * caller asked for is recorded as the CLI, capped and with secret-shaped parts redacted; the
 * extension is only ever one the configuration installs (a name the caller made up never
 * files an event under an extension of its choosing).
 */
function hostEvent(
  ref: unknown,
  tool: ConfiguredTool | undefined,
  tier: { tier: Tier; reason: string },
  started: number,
  err?: unknown,
): ExecutionEvent {
  const asked = redactSecrets(typeof ref === 'string' ? ref : '').slice(0, 64) || '-';
  const extensionId = tool?.extensionId ?? '-';
  const failed = err !== undefined;
  return {
    type: failed ? 'extension.execution.failed' : 'extension.execution.succeeded',
    time: new Date().toISOString(),
    runId: crypto.randomUUID(),
    extensionId,
    cliId: tool?.cliId ?? asked,
    cliTier: tier.tier,
    cliTierReason: tier.reason,
    ...(failed ? { code: isBrokerError(err) ? err.code : 'INTERNAL_ERROR', refusedBy: 'host' as const } : {}),
    durationMs: Math.round(performance.now() - started),
  };
}

/**
 * The tools a configuration offers here. A configured isolated image never falls back to
 * plain: where bubblewrap cannot run, its CLIs are withheld (TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE).
 */
export async function offeredTools(
  config: Pick<LoadedConfig, 'tools' | 'withheld'>,
  probe?: () => Promise<string | undefined>,
  opts: { allowPlainProfile?: boolean } = { allowPlainProfile: true },
): Promise<{ offered: ConfiguredTool[]; withheld: WithheldTool[] }> {
  const withheld: WithheldTool[] = [...config.withheld];
  const offered: ConfiguredTool[] = [];
  const check = probe ?? (await import('../sandbox/isolated.js')).isolationUnavailable;
  const isolation = config.tools.some((t) => t.image.profile === 'isolated') ? await check() : undefined;
  for (const tool of config.tools) {
    if (tool.image.profile === 'plain' && opts.allowPlainProfile !== true) {
      withheld.push({
        id: tool.id,
        name: tool.name,
        code: 'TOOL_VENDOR_CLI_PLAIN_NOT_ALLOWED',
        message: `image ${tool.image.name} has profile plain, which reads every file this process can; the host was not started with allowPlainProfile: true`,
      });
    } else if (tool.image.profile === 'isolated' && isolation !== undefined) {
      withheld.push({
        id: tool.id,
        name: tool.name,
        code: 'TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE',
        message: `image ${tool.image.name} asks for the isolated profile, which cannot run here: ${isolation}`,
      });
    } else offered.push(tool);
  }
  return { offered, withheld };
}

/** The call's answer: a completed run's output, or the failure its result stands for. */
export function outcome(r: RunResult): ToolOutput {
  const meta = { runId: r.runId, cliTier: r.cliTier, cliTierReason: r.cliTierReason };
  // what a failed call may have left behind at the vendor: the agent checks it with a read
  const unknown = {
    ...(r.outcomeUnknown ? { outcomeUnknown: true } : {}),
    ...(r.unknownOutcomes.length > 0 ? { unknownOutcomes: r.unknownOutcomes.map((w) => ({ ...w })) } : {}),
  };
  const output = {
    exitCode: r.exitCode,
    stdout: r.stdout,
    stderr: r.stderr,
    truncated: r.truncated,
    ...unknown,
  };
  switch (r.status) {
    case 'completed':
      return {
        exitCode: r.exitCode ?? 1,
        stdout: r.stdout,
        stderr: r.stderr,
        truncated: r.truncated,
        ...meta,
        ...(r.refusals.length > 0 ? { outlivedRefusals: r.refusals.map(outlived) } : {}),
      };
    case 'refused': {
      const f = r.refusal;
      const code: ErrorCode = isErrorCode(f.code) ? f.code : 'POLICY_BLOCKED';
      const policyCode = f.policyCode !== undefined && isErrorCode(f.policyCode) ? f.policyCode : undefined;
      throw new BrokerError(code, {
        message: f.message,
        ...(policyCode ? { policyCode } : {}),
        details: { request: { method: f.method, host: f.host, path: f.path }, ...meta, ...output },
      });
    }
    case 'paused': {
      const a = r.approval;
      throw brokerError(
        'CLI_APPROVAL_PENDING',
        { approval: a },
        {
          details: {
            approvalId: a.id,
            request: {
              method: a.method,
              host: a.host,
              path: a.path,
              ...(a.graphqlOperation ? { graphqlOperation: a.graphqlOperation } : {}),
            },
            ...meta,
            ...output,
          },
        },
      );
    }
    case 'timed_out':
      throw new BrokerError('CLI_TIMEOUT', { details: { ...meta, ...output } });
    case 'failed':
      throw brokerError(
        'CLI_EXITED_BY_SIGNAL',
        { signal: r.signal },
        { details: { signal: r.signal, ...meta, ...output } },
      );
  }
}
