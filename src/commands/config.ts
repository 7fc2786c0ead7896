/**
 * `clibroker config validate`: load an operator configuration exactly as the broker daemon
 * would start with it (secrets looked up, images and manifests hashed, every CLI's
 * credentials planned, plain images refused, the daemon block and the store checked) and
 * show what it offers, or fail with every problem. The back-end is `src/config`, loaded only
 * when the command runs. An operator's command: `agent manifest` leaves it out.
 *
 * A refused configuration is a failure (exit 1): `error.code` CONFIG_INVALID with
 * `error.details.problems` listing every problem with its code and path, so a script or a
 * deployment step stops on it.
 */
import type { ConfigProblem, LoadedConfig } from '../config/types.js';
import { defineTool } from '../cli/define.js';

export const configValidate = defineTool({
  namespace: 'config',
  name: 'validate',
  description: [
    'Validate an operator configuration file as clibroker daemon would start with it (--for serve or --for host for another consumer) and list the tools it offers, or fail (exit 1, error.code CONFIG_INVALID) with every problem, its code and path, in error.details.problems.',
    'Beyond the loader it checks what the consumer refuses at start: plain images (daemon, serve), a missing daemon block (daemon), and a store that cannot be opened (SQLite: the driver, the store file and its directory; PostgreSQL: the database opened as the daemon opens it, its schema not behind).',
    'Run it as the user the daemon runs as, with its environment: secrets and the store are checked the way the daemon reaches them (secret values are never shown).',
    'A tool with a problem of its own (CONFIG_CLI_NOT_RUNNABLE, CONFIG_TOOL_NAME_CONFLICT, CONFIG_IMAGE_UNKNOWN, CONFIG_IMAGE_ENTRYPOINT_MISMATCH) is listed in withheld and the rest is valid, unless the configuration is strict; so is a tool whose image requires conformance and has no passing verdict in the store (TOOL_VENDOR_CLI_CONFORMANCE_UNVERIFIED, TOOL_VENDOR_CLI_CONFORMANCE_FAILED).',
  ].join('\n'),
  parameters: {
    config: { type: 'string', describe: 'the configuration JSON file (docs/config.md)' },
    for: {
      type: 'enum',
      values: ['daemon', 'serve', 'host'],
      default: 'daemon',
      describe:
        'the consumer whose start-up checks apply: daemon (the strictest), serve, or host (an in-process host, where plain images are allowed)',
    },
  },
  examples: [
    {
      params: { config: '/etc/clibroker/config.json' },
      comment: 'check the configuration before (re)starting the daemon',
      output: {
        valid: true,
        checkedFor: 'daemon',
        tools: [{ id: 'github:cli:gh', name: 'gh_cli', image: 'gh', profile: 'isolated' }],
        withheld: [],
        warnings: [],
      },
    },
    {
      params: { config: '/etc/clibroker/config.json', for: 'serve' },
      comment: 'check a configuration served by clibroker serve only (no daemon block)',
    },
  ],
  outputShape:
    '{valid: true, file: string, checkedFor: "daemon"|"serve"|"host", tools: {id, name, image, profile}[], withheld: {id, name, code, message}[], warnings: {path, message}[]}; refused: exit 1, error.code CONFIG_INVALID, error.details {checkedFor, count, problems: {code, path, message}[]}',
  async run(p) {
    const { validateConfigFile } = await import('../config/validate.js');
    return validateConfigFile(p.config, { for: p.for, conformance: gateFromStore, probeStore });
  },
});

/**
 * The conformance gate as the consumer would apply it at start, read from the configuration's
 * store. Validation creates nothing: a SQLite store that does not exist yet holds no verdict;
 * a PostgreSQL one is opened as a host opens it (never migrated).
 */
async function gateFromStore<T extends import('../conformance/gate.js').GatedTool>(
  tools: readonly T[],
  config: LoadedConfig,
) {
  const [{ conformanceWithheld }, { existsSync }] = await Promise.all([
    import('../conformance/gate.js'),
    import('node:fs'),
  ]);
  if (config.storePostgres === undefined && (config.store === ':memory:' || !existsSync(config.store)))
    return conformanceWithheld(tools, { conformanceFor: async () => undefined });
  const { openConfiguredStore } = await import('../host/store.js');
  const opened = await openConfiguredStore(config, { retention: false, create: false });
  try {
    return await conformanceWithheld(tools, opened);
  } finally {
    await opened.close();
  }
}

/**
 * Why the configuration's PostgreSQL store would not open as `clibroker daemon`, `serve` or a
 * host opens it at start: its URL unreadable, the server unreachable within the reconnect
 * window, its schema behind this build (STORE_SCHEMA_OUTDATED: run `clibroker store migrate
 * --config`) or ahead of it. The problem carries the store's own code; its message never the URL.
 */
async function probeStore(config: LoadedConfig): Promise<ConfigProblem | undefined> {
  const [{ openConfiguredStore }, { isBrokerError }] = await Promise.all([
    import('../host/store.js'),
    import('../errors.js'),
  ]);
  try {
    const opened = await openConfiguredStore(config, { retention: false, create: false });
    await opened.close();
    return undefined;
  } catch (e) {
    if (!isBrokerError(e)) throw e;
    const hint =
      e.code === 'STORE_SCHEMA_OUTDATED' ? ' (clibroker store migrate --config <file> migrates it)' : '';
    return {
      path: 'store',
      code: e.code,
      message: `the PostgreSQL store cannot be opened: ${e.message}${hint}`,
    };
  }
}
