/**
 * createHost: a loaded operator configuration, running its `<id>_cli` tools. One broker, one
 * runner and one store for the host's life; every call takes from the agent only `{args,
 * stdin?}`, and from the host only the requested tier and the context. Everything else — the
 * manifest, the connection and its secrets, the endpoint, the ceiling, the identity, the
 * assignment, the pinned program and its profile — comes from the configuration.
 *
 *   start: open the store (and the audit push) ─▶ the tools offered here (tools.ts)
 *   ─▶ start the broker, routed as `upstream` says ─▶ one runner over both
 *   a call (calls.ts): resolve the tool (offered? withheld?) ─▶ check the input
 *   ─▶ the store's assignment switch ─▶ runner.run with the pinned image and the connection,
 *      whose secrets it reads when the call starts
 *   ─▶ completed: {exitCode, stdout, stderr} │ anything else: a BrokerError with its code
 */
import type { Logger } from 'pino';
import type { BrokerOptions } from '../broker/types.js';
import type { LoadedConfig, WithheldTool } from '../config/types.js';
import type { Store } from '../store/types.js';
import type { AuditPush } from './audit-push.js';
import { type HostParts, resumeApproval, runTool } from './calls.js';
import { openConfiguredStore } from './store.js';
import { conformingTools, HelpTrees, listingsOf, offeredTools, refuseWithheldWhenStrict } from './tools.js';
import type { ToolHost } from './types.js';

export { outcome } from './calls.js';
export { offeredTools } from './tools.js';

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
  const lib = await hostModules();
  const stores = await openStores(config, opts);
  const { store } = stores;
  const tools = await stores.closedOnThrow(async () => {
    const here = await offeredTools(config, lib.isolationUnavailable, {
      allowPlainProfile: opts.allowPlainProfile === true,
    });
    const gated = await conformingTools(here, store);
    refuseWithheldWhenStrict(config, gated.withheld);
    return gated;
  });
  const broker = await stores.closedOnThrow(() => lib.createBroker(brokerOptions(config, opts.logger)));
  const logger = opts.logger ? { logger: opts.logger } : {};
  const runner = lib.createRunner({ broker, store, ...logger });
  const parts: HostParts = { config, store, runner, tools, trees: new HelpTrees(config), ...logger };
  const listings = listingsOf(
    tools.offered,
    (t) =>
      lib.jsonSchema(
        lib.vendorCliTool({ id: t.cliId, description: t.description }, () => undefined),
        'gadget',
      ) as Record<string, unknown>,
  );
  return {
    config,
    store,
    withheld: () => [...tools.withheld],
    tools: () => listings.map((l) => ({ ...l })),
    runTool: (ref, input, options, control) => runTool(parts, ref, input, options, control),
    resume: (approvalId, control) => resumeApproval(parts, approvalId, control),
    approve: (id, who) => runner.approve(id, who),
    reject: (id, who) => runner.reject(id, who),
    checkStore: () => runner.checkStore(),
    async close() {
      await broker.close();
      await stores.close();
    },
  };
}

/** What a host starts with, imported when it starts: a process that only lists tools never loads the engine. */
async function hostModules() {
  const [{ createBroker }, { createRunner }, { isolationUnavailable }, { vendorCliTool }, { jsonSchema }] =
    await Promise.all([
      import('../broker/broker.js'),
      import('../runs/runner.js'),
      import('../sandbox/isolated.js'),
      import('../cli/vendor.js'),
      import('../cli/schema.js'),
    ]);
  return { createBroker, createRunner, isolationUnavailable, vendorCliTool, jsonSchema };
}

/** The host's store (its own, or one passed in), the audit push feeding on it, and their closing. */
interface HostStores {
  /** what the host appends to: the store, or the store that also feeds the push */
  store: Store;
  /** runs `step`; a throw stops the push, closes the store the host opened (not one passed in) and is rethrown */
  closedOnThrow<T>(step: () => Promise<T>): Promise<T>;
  /** the push, then the store the host opened */
  close(): Promise<void>;
}

/** Opens the configuration's store unless one is passed in; the collector gets a copy of every event appended. */
async function openStores(config: LoadedConfig, opts: HostOptions): Promise<HostStores> {
  const opened =
    opts.store ?? (await openConfiguredStore(config, opts.logger ? { logger: opts.logger } : {}));
  const own = opts.store === undefined;
  let pushed: Awaited<ReturnType<typeof startAuditPush>>;
  try {
    pushed = config.auditOtlp ? await startAuditPush(config, opened, opts.logger) : undefined;
  } catch (e) {
    if (own) await opened.close();
    throw e;
  }
  const store = pushed?.store ?? opened;
  const close = async (): Promise<void> => {
    await pushed?.push.close();
    if (own) await store.close();
  };
  return {
    store,
    async closedOnThrow(step) {
      try {
        return await step();
      } catch (e) {
        await close();
        throw e;
      }
    },
    close,
  };
}

/** The broker's options: routed as the configuration's `upstream` says (its CA, its addresses). */
export function brokerOptions(config: Pick<LoadedConfig, 'upstream'>, logger?: Logger): BrokerOptions {
  const up = config.upstream;
  return {
    ...(logger ? { logger } : {}),
    upstream: {
      ...(up?.caPem ? { ca: up.caPem } : {}),
      ...(up && up.connectTo.size > 0 ? { resolve: (host: string) => up.connectTo.get(host) } : {}),
      ...(up?.allowAddresses.length ? { allowAddresses: up.allowAddresses } : {}),
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
