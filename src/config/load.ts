/**
 * `loadConfig`: the operator configuration, validated, hashed and resolved, or refused as
 * a whole. Every problem is collected first (the shape, then each secret, image, manifest
 * and CLI on whatever parts are well-formed), then one CONFIG_INVALID lists them all.
 * A problem of one CLI alone (PER_TOOL_CODES) withholds that CLI and the rest loads, unless
 * the configuration is `strict`, where it refuses the load like any other.
 *
 *   read (JSON, a syntax error placed) → shape (zod) → images pinned
 *     → extensions: secrets present, manifests hashed and valid
 *     → each CLI: image known, entrypoint the pinned program, credentials plannable
 *     → tool names settled → withheld (or, strict, refused); a disabled toolkit's CLIs withheld
 *     → store, daemon, serve, upstream, audit push: defaults, secrets present, files hidden
 *     → refused, or resolved with each secret read again at the call that needs it
 *
 * Each step is a function of its own (load-clis.ts, load-services.ts) over the load in
 * progress (load-context.ts); this file runs them in order.
 */
import { readFile, realpath } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { markOperatorDirectory } from '../audit/secret-shape.js';
import { brokerError } from '../errors.js';
import { secretFields, withSecrets } from './connection.js';
import { describePosition, syntaxErrorOffset } from './json-position.js';
import { installExtensions, pinImages, settleTools, type SettledTools } from './load-clis.js';
import { type ConfigOrigin, type Load, startLoad } from './load-context.js';
import {
  refusePlainImages,
  resolveAuditOtlp,
  resolveDaemon,
  resolveServe,
  resolveStore,
  resolveUpstream,
  type ServeRefs,
} from './load-services.js';
import { ConfigProblems } from './problems.js';
import { shapeProblems } from './schema.js';
import { readSecret, readToken } from './secrets.js';
import type { InstalledExtension, LoadedConfig, OperatorConfig, PinnedImage, ServeTokens } from './types.js';

export {
  DEFAULT_APPROVAL_TIMEOUT_SECONDS,
  DEFAULT_AUDIT_OTLP,
  DEFAULT_REVIEW_SESSION_IDLE_MINUTES,
  DEFAULT_REVIEW_SESSION_MAX_HOURS,
  DEFAULT_SERVE_PORT,
  DEFAULT_STORE_POOL_SIZE,
  DEFAULT_STORE_RECONNECT_WINDOW_SECONDS,
} from './load-services.js';

/** How `loadConfig` resolves: the directory relative paths start from, and the environment secrets come from. */
export interface LoadOptions {
  /** where relative paths of an object configuration resolve; default the current directory (a file's own directory for a path) */
  baseDir?: string;
  /** the environment secrets are read from, at load and at every call; default process.env */
  env?: Record<string, string | undefined>;
  /**
   * the configuration is loaded by a process that serves agents (`clibroker daemon`, `clibroker
   * serve`): its CLIs must not have that process's file access, so a plain image is refused
   * (as it is whenever the configuration has a `daemon` block)
   */
  serving?: boolean;
  /**
   * false: secret references are checked for their shape only, and no secret file or variable
   * is looked at (a missing or loose secret is no problem of this load); for a reader that
   * needs the tools, not the credentials (`clibroker agent manifest --config`). The loaded
   * configuration still reads each secret when a call needs it. Default true.
   * @internal
   */
  readSecrets?: boolean;
}

export const DEFAULT_DEADLINE_SECONDS = 270;

/**
 * Load an operator configuration: a JSON file path, or the same shape as an object.
 * @throws BrokerError CONFIG_INVALID with `details.problems` listing every problem
 */
export async function loadConfig(
  source: string | OperatorConfig,
  opts: LoadOptions = {},
): Promise<LoadedConfig> {
  const file = typeof source === 'string' ? resolve(source) : undefined;
  // the operator's own directory, named in every message about its files, is not redacted
  if (file !== undefined) markOperatorDirectory(dirname(file));
  const input: unknown = file !== undefined ? await readConfigFile(file) : source;
  const origin = configOrigin(file, opts);
  const load = startLoad(input, origin, opts);
  shapeProblems(input, load.out);
  const images = await pinImages(load);
  const { extensions, candidates } = await installExtensions(load, images);
  const strict = load.cfg['strict'] === true;
  const settled = settleTools(candidates, strict);
  const { store, storePostgres } = await resolveStore(load);
  const daemon = await resolveDaemon(load);
  refusePlainImages(load, images.configs, opts.serving);
  const { serve, refs } = await resolveServe(load, daemon);
  const upstream = await resolveUpstream(load);
  const auditOtlp = await resolveAuditOtlp(load);
  refuseIfAnyProblem(load, origin, settled, strict);
  await hideRealPaths(load.hidden);
  const loaded = loadedConfig(load, input as OperatorConfig, {
    store,
    storePostgres,
    images: images.pinned,
    extensions,
    settled,
    strict,
    serve,
    daemon,
    serveRefs: refs,
  });
  if (file !== undefined) loaded.file = file;
  if (daemon) loaded.daemon = daemon;
  if (upstream) loaded.upstream = upstream;
  if (auditOtlp) loaded.auditOtlp = auditOtlp;
  return loaded;
}

/** Where a configuration comes from: its file's directory, or the caller's base directory. */
export function configOrigin(
  file: string | undefined,
  opts: Pick<LoadOptions, 'baseDir'> = {},
): ConfigOrigin {
  return {
    file,
    base: file !== undefined ? dirname(file) : resolve(opts.baseDir ?? '.'),
    what: file !== undefined ? `the configuration ${file}` : 'the configuration',
  };
}

/**
 * The configuration file, read and parsed; a syntax error is placed by line and column.
 * @throws BrokerError CONFIG_INVALID when it cannot be read or is not JSON
 */
export async function readConfigFile(file: string): Promise<unknown> {
  const out = new ConfigProblems();
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    out.add(
      'CONFIG_FIELD_INVALID',
      [],
      `cannot read the configuration file ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
    );
    out.throwIfAny(`the configuration ${file}`);
  }
  try {
    return JSON.parse(text!);
  } catch {
    // V8's message quotes the text around the error, which may hold a secret written inline;
    // the position is found again here, and its line is shown redacted
    const at = syntaxErrorOffset(text!);
    let where = '';
    if (at !== undefined) {
      const { line, column, excerpt } = describePosition(text!, at);
      where = ` (a syntax error at line ${line}, column ${column}${excerpt === '' ? '' : `, where the line reads: ${excerpt}`})`;
    }
    out.add('CONFIG_FIELD_INVALID', [], `the configuration file ${file} is not JSON${where}`);
    out.throwIfAny(`the configuration ${file}`);
  }
}

/**
 * Refuse the load when anything is wrong: every problem found, each CLI's own problems too
 * (strict refuses for those alone; otherwise they only withhold their CLI).
 * @throws BrokerError CONFIG_INVALID
 */
export function refuseIfAnyProblem(
  load: Load,
  origin: ConfigOrigin,
  settled: SettledTools,
  strict: boolean,
): void {
  // a load refused anyway lists every problem, so the operator fixes them in one pass
  if (strict || load.out.items.length > 0) load.out.items.push(...settled.perTool);
  load.out.throwIfAny(origin.what);
}

/** A path reached through a symbolic link (a mounted secret, a linked configuration) is hidden under both names. */
export async function hideRealPaths(hidden: Set<string>): Promise<void> {
  for (const p of [...hidden]) {
    const real = await realpath(p).catch(() => p);
    hidden.add(real);
  }
}

/**
 * The loaded configuration: what the steps resolved, and the secrets read again at each
 * call that needs them (a rotated secret is picked up without a reload).
 */
function loadedConfig(
  load: Load,
  valid: OperatorConfig,
  parts: {
    store: string;
    storePostgres: LoadedConfig['storePostgres'];
    images: Map<string, PinnedImage>;
    extensions: Map<string, InstalledExtension>;
    settled: SettledTools;
    strict: boolean;
    serve: LoadedConfig['serve'];
    daemon: LoadedConfig['daemon'];
    serveRefs: ServeRefs;
  },
): LoadedConfig {
  const { storePostgres, extensions, daemon, serveRefs } = parts;
  const env = load.env;
  return {
    ceiling: valid.organization.ceiling,
    store: parts.store,
    ...(storePostgres ? { storePostgres } : {}),
    ...(valid.storeRetention ? { storeRetentionDays: valid.storeRetention.days } : {}),
    deadlineMs: (valid.deadlineSeconds ?? DEFAULT_DEADLINE_SECONDS) * 1000,
    images: parts.images,
    extensions,
    tools: parts.settled.tools,
    withheld: parts.settled.withheld,
    strict: parts.strict,
    serve: parts.serve,
    hiddenPaths: [...load.hidden],
    async connection(extensionId) {
      const ext = extensions.get(extensionId);
      if (!ext) {
        throw brokerError(
          'TOOL_VENDOR_CLI_NOT_OFFERED',
          { extension: extensionId.slice(0, 64) },
          { details: { extensions: [...extensions.keys()] } },
        );
      }
      const values = new Map<string, string>();
      for (const [field, ref] of secretFields(ext.connection))
        values.set(field, await readSecret(ref, env, `extensions.${extensionId}.connection.${field}`));
      return withSecrets(ext.connection, (f) => values.get(f)!);
    },
    async executorToken() {
      const ref = daemon?.executorToken;
      return ref === undefined ? undefined : readToken(ref, env, 'daemon.executorToken');
    },
    async serveTokens() {
      const tokens: ServeTokens = { reviewers: [] };
      if (serveRefs.executor)
        tokens.executor = await readToken(serveRefs.executor, env, 'serve.executorToken');
      if (serveRefs.mcp) tokens.mcp = await readToken(serveRefs.mcp, env, 'serve.mcpToken');
      for (const [who, ref] of serveRefs.reviewers)
        tokens.reviewers.push([who, await readToken(ref, env, `serve.reviewers.${who}`)]);
      return tokens;
    },
  };
}
