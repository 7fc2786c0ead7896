/**
 * `loadConfig`: the operator configuration, validated, hashed and resolved, or refused as
 * a whole. Every problem is collected first (the shape, then each secret, image, manifest
 * and CLI on whatever parts are well-formed), then one CONFIG_INVALID lists them all.
 * A problem of one CLI alone (PER_TOOL_CODES) withholds that CLI and the rest loads, unless
 * the configuration is `strict`, where it refuses the load like any other.
 *
 *   shape (zod) → images pinned → secrets present → manifests hashed and valid
 *     → each CLI: image known, entrypoint the pinned program, credentials plannable
 *     → tool names settled → withheld (or, strict, refused); a disabled toolkit's CLIs withheld
 */
import { readFile, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { markOperatorDirectory } from '../audit/secret-shape.js';
import { brokerError } from '../errors.js';
import { type CliCandidate, checkCli, nameTools } from './clis.js';
import { resolveConnection, secretFields, withSecrets } from './connection.js';
import { checkImage } from './images.js';
import { describePosition, syntaxErrorOffset } from './json-position.js';
import { checkManifest } from './manifests.js';
import { disabledToolkits, owningToolkit } from './toolkits.js';
import { ConfigProblems } from './problems.js';
import { configSchemas, parseIpPort, parseSocketMode, shapeProblems, storeStringProblem } from './schema.js';
import {
  type Env,
  type ResolvedSecretRef,
  lookupSecret,
  lookupToken,
  readSecret,
  readToken,
  refName,
  resolveRef,
} from './secrets.js';
import type {
  ConfigProblem,
  ConfiguredTool,
  ConnectionConfig,
  InstalledExtension,
  LoadedConfig,
  OperatorConfig,
  PinnedImage,
  ServeTokens,
  WithheldTool,
} from './types.js';

/** The withheld entry of a CLI whose toolkit the configuration disables. */
function toolkitDisabled(c: CliCandidate, toolkit: string): ConfigProblem {
  const also = c.problems.length > 0 ? ` (also ${c.problems.map((p) => p.code).join(', ')})` : '';
  return {
    code: 'TOOL_VENDOR_CLI_TOOLKIT_DISABLED',
    path: `extensions.${c.extensionId}.toolkits.${toolkit}.enabled`,
    message: `the CLI ${c.cliId} belongs to the toolkit "${toolkit}", which the configuration disables; set extensions.${c.extensionId}.toolkits.${toolkit}.enabled to true to offer it${also}`,
  };
}

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
const DEFAULT_SOCKET_MODE = '0660';
export const DEFAULT_SERVE_PORT = 8787;
export const DEFAULT_APPROVAL_TIMEOUT_SECONDS = 600;
/** `serve.reviewSessionIdleMinutes` when absent: a review session not used for half an hour ends. */
export const DEFAULT_REVIEW_SESSION_IDLE_MINUTES = 30;
/** `serve.reviewSessionMaxHours` when absent: a working day, after which the reviewer signs in again. */
export const DEFAULT_REVIEW_SESSION_MAX_HOURS = 12;
/** `store.poolSize` when absent: connections per process to a PostgreSQL store. */
export const DEFAULT_STORE_POOL_SIZE = 10;
/** `store.reconnectWindowSeconds` when absent: how long a call waits for an unreachable PostgreSQL. */
export const DEFAULT_STORE_RECONNECT_WINDOW_SECONDS = 10;
/** `audit.otlp`'s defaults (docs/audit.md, "Push to a collector"). */
export const DEFAULT_AUDIT_OTLP = {
  batchSize: 512,
  flushIntervalMs: 1_000,
  maxQueue: 10_000,
  retryForMs: 60_000,
  timeoutMs: 10_000,
} as const;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const entries = (v: unknown): [string, unknown][] => (isObj(v) ? Object.entries(v) : []);

/** The upstream CA bundle: readable, and holding a certificate. */
async function readCa(file: string, out: ConfigProblems): Promise<string | undefined> {
  let pem: string;
  try {
    pem = await readFile(file, 'utf8');
  } catch (e) {
    out.add(
      'CONFIG_FIELD_INVALID',
      ['upstream', 'caFile'],
      `cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
    );
    return undefined;
  }
  if (pem.includes('-----BEGIN CERTIFICATE-----')) return pem;
  out.add(
    'CONFIG_FIELD_INVALID',
    ['upstream', 'caFile'],
    `${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
  );
  return undefined;
}

async function readConfigFile(file: string): Promise<unknown> {
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
 * Load an operator configuration: a JSON file path, or the same shape as an object.
 * @throws BrokerError CONFIG_INVALID with `details.problems` listing every problem
 */
export async function loadConfig(
  source: string | OperatorConfig,
  opts: LoadOptions = {},
): Promise<LoadedConfig> {
  const {
    connectionSchema,
    daemonSchema,
    imageSchema,
    installSchema,
    secretRefSchema,
    serveSchema,
    storeSchema,
    upstreamSchema,
    auditOtlpSchema,
  } = configSchemas();
  const env: Env = opts.env ?? process.env;
  const file = typeof source === 'string' ? resolve(source) : undefined;
  // the operator's own directory, named in every message about its files, is not redacted
  if (file !== undefined) markOperatorDirectory(dirname(file));
  const input: unknown = file !== undefined ? await readConfigFile(file) : source;
  const base = file !== undefined ? dirname(file) : resolve(opts.baseDir ?? '.');
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(base, p));
  const what = file !== undefined ? `the configuration ${file}` : 'the configuration';

  const out = new ConfigProblems();
  shapeProblems(input, out);
  const cfg = (isObj(input) ? input : {}) as Obj;
  const hidden = new Set<string>(file !== undefined ? [file] : []);

  // images
  const images = new Map<string, PinnedImage>();
  const imageConfigs = new Map<string, { executable: string; profile: 'isolated' | 'plain' }>();
  for (const [name, raw] of entries(cfg['images'])) {
    // the file is checked whenever its path and hash are well-formed, so a typo in a sibling field hides nothing
    const r = imageSchema.safeParse(raw);
    const rawImg = isObj(raw) ? raw : {};
    const exe = imageSchema.shape.executable.safeParse(rawImg['executable']);
    const sha = imageSchema.shape.sha256.safeParse(rawImg['sha256']);
    if (!exe.success || !sha.success) continue;
    // a fallback only when the load already has a shape problem
    const img = r.success ? r.data : { executable: exe.data, sha256: sha.data, profile: 'isolated' as const };
    imageConfigs.set(name, img);
    const pinned = await checkImage(name, img, out);
    // the image's own word, else the configuration's, else required: fail closed, an
    // unverified program is not offered until a verdict or the operator's waiver says so
    const gate = r.success
      ? (r.data.conformance ?? (cfg['conformance'] === 'optional' ? undefined : 'required'))
      : undefined;
    if (pinned) images.set(name, gate === undefined ? pinned : { ...pinned, conformance: gate });
  }

  // secrets: present now, and hidden from the CLI; a front door's token strong enough too
  const checkRef = async (ref: ResolvedSecretRef, path: (string | number)[], token = false) => {
    if ('file' in ref) hidden.add(ref.file);
    if (opts.readSecrets === false) return;
    const r = token ? await lookupToken(ref, env) : await lookupSecret(ref, env);
    if (!r.ok) out.add(r.code, path, `${r.why}`);
  };

  // extensions and their CLIs
  const extensions = new Map<string, InstalledExtension>();
  const candidates: CliCandidate[] = [];
  for (const [key, raw] of entries(cfg['extensions'])) {
    const r = installSchema.safeParse(raw);
    const rawObj = isObj(raw) ? raw : {};
    const conn = connectionSchema.safeParse(rawObj['connection']);
    const connection = conn.success ? resolveConnection(conn.data as ConnectionConfig, abs) : undefined;
    if (connection)
      for (const [field, ref] of secretFields(connection))
        await checkRef(ref, ['extensions', key, 'connection', field]);
    // as for images: the manifest and the CLIs are checked whenever their own fields are well-formed
    const m = installSchema.shape.manifest.safeParse(rawObj['manifest']);
    const sha = installSchema.shape.sha256.safeParse(rawObj['sha256']);
    const endpoint = installSchema.shape.endpoint.safeParse(rawObj['endpoint']);
    if (!m.success || !sha.success) continue;
    const manifestFile = typeof m.data === 'string' ? abs(m.data) : undefined;
    const manifest = await checkManifest(key, m.data, manifestFile, sha.data, out);
    if (!manifest || !connection || !endpoint.success) continue;
    const ext: InstalledExtension = {
      id: key,
      manifest,
      sha256: sha.data,
      connection,
      identity: r.data?.identity ?? 'assigned',
      assignment: r.data?.assignment ?? 'default',
    };
    if (endpoint.data !== undefined) ext.endpoint = endpoint.data;
    extensions.set(key, ext);
    const imageNames = entries(cfg['images']).map(([n]) => n);
    const toolkits = installSchema.shape.toolkits.safeParse(rawObj['toolkits']);
    const disabled = disabledToolkits(key, manifest, toolkits.success ? toolkits.data : undefined, out);
    for (const [i, cli] of manifest.clis.entries()) {
      const candidate = checkCli({
        ext,
        cli,
        at: ['extensions', key, 'manifest', 'clis', i],
        imageNames,
        imageConfigs,
        images,
      });
      const toolkit = owningToolkit(manifest, cli);
      if (toolkit !== undefined && disabled.has(toolkit)) candidate.disabledToolkit = toolkit;
      candidates.push(candidate);
    }
  }

  // each CLI offered, or withheld for its own problems; strict: those refuse the load
  const strict = cfg['strict'] === true;
  const names = nameTools(candidates, strict);
  const tools: ConfiguredTool[] = [];
  const withheld: WithheldTool[] = [];
  const perTool: ConfigProblem[] = [];
  for (const c of candidates) {
    const name = names.get(c)!;
    if (c.disabledToolkit !== undefined) {
      // the operator's choice, not a problem: withheld whatever else is wrong with the CLI
      // (its own problems still count below), and never a reason for strict to refuse
      const off = toolkitDisabled(c, c.disabledToolkit);
      withheld.push({ id: c.id, name, ...off });
      perTool.push(...c.problems);
      continue;
    }
    const [first, ...more] = c.problems;
    if (first === undefined) {
      if (c.tool) tools.push({ ...c.tool, name });
      continue;
    }
    perTool.push(...c.problems);
    const also = more.length > 0 ? ` (also ${more.map((p) => p.code).join(', ')})` : '';
    withheld.push({ id: c.id, name, code: first.code, message: `${first.message}${also}`, path: first.path });
  }

  // the store, the daemon, the upstream
  const rawStore = cfg['store'];
  let store =
    typeof rawStore === 'string' && rawStore !== '' && storeStringProblem(rawStore) === undefined
      ? rawStore === ':memory:'
        ? ':memory:'
        : abs(rawStore)
      : '';
  if (store !== '' && store !== ':memory:')
    for (const p of [store, `${store}-wal`, `${store}-shm`, `${store}-journal`, `${store}.runs`])
      hidden.add(p);
  // PostgreSQL: the URL is a secret like every other, present now and its file hidden from the CLI
  let storePostgres: LoadedConfig['storePostgres'];
  const rawPg = isObj(rawStore) ? secretRefSchema.safeParse(rawStore['postgres']) : undefined;
  if (rawPg?.success) {
    const url = resolveRef(rawPg.data, abs);
    await checkRef(url, ['store', 'postgres']);
    const pgShape = storeSchema.safeParse(rawStore);
    const pgOpts: { poolSize?: number; reconnectWindowSeconds?: number } =
      pgShape.success && typeof pgShape.data === 'object' ? pgShape.data : {};
    storePostgres = {
      url,
      poolSize: pgOpts.poolSize ?? DEFAULT_STORE_POOL_SIZE,
      reconnectWindowMs: (pgOpts.reconnectWindowSeconds ?? DEFAULT_STORE_RECONNECT_WINDOW_SECONDS) * 1000,
    };
    const named = refName(url);
    store = `postgres (URL in ${'env' in named ? `env ${named.env}` : `file ${named.file}`})`;
  }
  let daemon: LoadedConfig['daemon'];
  const rawDaemon = isObj(cfg['daemon']) ? cfg['daemon'] : {};
  if (typeof rawDaemon['socket'] === 'string' && isAbsolute(rawDaemon['socket']))
    hidden.add(rawDaemon['socket']);
  const token = secretRefSchema.safeParse(rawDaemon['executorToken']);
  const tokenRef = token.success ? resolveRef(token.data, abs) : undefined;
  if (tokenRef) await checkRef(tokenRef, ['daemon', 'executorToken'], true);
  const d = daemonSchema.safeParse(cfg['daemon']);
  if (d.success && d.data) {
    const mode = parseSocketMode(d.data.socketMode ?? DEFAULT_SOCKET_MODE)!;
    daemon = {
      socket: d.data.socket,
      socketMode: `0${mode.toString(8).padStart(3, '0')}`,
      cliTier: d.data.cliTier ?? 'read',
      context: d.data.context ?? 'agent-step',
    };
    if (tokenRef) daemon.executorToken = tokenRef;
  }

  // a CLI run with the daemon's own file access could read the secrets it holds (`curl -d @<secret file>`)
  if (isObj(cfg['daemon']) || opts.serving)
    for (const [name, img] of imageConfigs)
      if (img.profile === 'plain')
        out.add(
          'CONFIG_IMAGE_PLAIN_UNDER_DAEMON',
          ['images', name, 'profile'],
          `image "${name}" is plain, but a daemon or server serves this configuration to agents: an argument such as -d @<file> would read its secrets; use profile isolated`,
        );

  // the serve block: its token references are checked like every secret, read per request
  const rawServe = isObj(cfg['serve']) ? cfg['serve'] : {};
  const serveRefs: {
    executor?: ResolvedSecretRef;
    mcp?: ResolvedSecretRef;
    reviewers: [string, ResolvedSecretRef][];
  } = {
    reviewers: [],
  };
  for (const role of ['executor', 'mcp'] as const) {
    const r = secretRefSchema.safeParse(rawServe[`${role}Token`]);
    if (r.success) {
      serveRefs[role] = resolveRef(r.data, abs);
      await checkRef(serveRefs[role], ['serve', `${role}Token`], true);
    }
  }
  for (const [who, raw] of entries(rawServe['reviewers'])) {
    const r = secretRefSchema.safeParse(raw);
    if (!r.success) continue;
    const ref = resolveRef(r.data, abs);
    await checkRef(ref, ['serve', 'reviewers', who], true);
    serveRefs.reviewers.push([who, ref]);
  }
  const sv = serveSchema.safeParse(cfg['serve']);
  const sd = sv.success ? (sv.data ?? {}) : {};
  const serve: LoadedConfig['serve'] = {
    host: sd.host ?? '127.0.0.1',
    port: sd.port ?? DEFAULT_SERVE_PORT,
    approvalTimeoutMs: (sd.approvalTimeoutSeconds ?? DEFAULT_APPROVAL_TIMEOUT_SECONDS) * 1000,
    cliTier: sd.cliTier ?? daemon?.cliTier ?? 'read',
    context: sd.context ?? daemon?.context ?? 'agent-step',
    // fail closed: the executor's token writes only where the operator said so
    executorMaxTier: sd.executorMaxTier ?? 'read',
    reviewSessionIdleMs: (sd.reviewSessionIdleMinutes ?? DEFAULT_REVIEW_SESSION_IDLE_MINUTES) * 60_000,
    reviewSessionMaxMs: (sd.reviewSessionMaxHours ?? DEFAULT_REVIEW_SESSION_MAX_HOURS) * 3_600_000,
  };
  if (sd.publicUrl !== undefined) serve.publicUrl = sd.publicUrl.replace(/\/$/, '');

  let upstream: LoadedConfig['upstream'];
  const rawUpstream = isObj(cfg['upstream']) ? cfg['upstream'] : {};
  const caPem =
    typeof rawUpstream['caFile'] === 'string' && rawUpstream['caFile'] !== ''
      ? await readCa(abs(rawUpstream['caFile']), out)
      : undefined;
  const u = upstreamSchema.safeParse(cfg['upstream']);
  if (u.success && u.data) {
    upstream = {
      connectTo: new Map(Object.entries(u.data.connectTo ?? {}).map(([h, v]) => [h, parseIpPort(v)!])),
      allowAddresses: [...(u.data.allowAddresses ?? [])],
    };
    if (caPem !== undefined) upstream.caPem = caPem;
  }

  // the audit push: its header values are secrets like every other, present now and their files hidden
  let auditOtlp: LoadedConfig['auditOtlp'];
  const rawAudit = isObj(cfg['audit']) ? cfg['audit'] : {};
  const rawOtlp = isObj(rawAudit['otlp']) ? rawAudit['otlp'] : {};
  const headerRefs: Record<string, ResolvedSecretRef> = {};
  for (const [name, raw] of entries(rawOtlp['headers'])) {
    const r = secretRefSchema.safeParse(raw);
    if (!r.success) continue;
    headerRefs[name] = resolveRef(r.data, abs);
    await checkRef(headerRefs[name], ['audit', 'otlp', 'headers', name]);
  }
  const ao = auditOtlpSchema.safeParse(rawAudit['otlp']);
  if (ao.success)
    auditOtlp = {
      ...DEFAULT_AUDIT_OTLP,
      ...ao.data,
      headers: headerRefs,
      async readHeaders() {
        const values: Record<string, string> = {};
        for (const [name, ref] of Object.entries(headerRefs))
          values[name] = await readSecret(ref, env, `audit.otlp.headers.${name}`);
        return values;
      },
    };

  // a load refused anyway lists every problem, so the operator fixes them in one pass
  if (strict || out.items.length > 0) out.items.push(...perTool);
  out.throwIfAny(what);

  // a path reached through a symbolic link (a mounted secret, a linked configuration) is hidden under both names
  for (const p of [...hidden]) {
    const real = await realpath(p).catch(() => p);
    hidden.add(real);
  }

  const valid = input as OperatorConfig;
  const loaded: LoadedConfig = {
    ceiling: valid.organization.ceiling,
    store,
    ...(storePostgres ? { storePostgres } : {}),
    ...(valid.storeRetention ? { storeRetentionDays: valid.storeRetention.days } : {}),
    deadlineMs: (valid.deadlineSeconds ?? DEFAULT_DEADLINE_SECONDS) * 1000,
    images,
    extensions,
    tools,
    withheld,
    strict,
    serve,
    hiddenPaths: [...hidden],
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
  if (file !== undefined) loaded.file = file;
  if (daemon) loaded.daemon = daemon;
  if (upstream) loaded.upstream = upstream;
  if (auditOtlp) loaded.auditOtlp = auditOtlp;
  return loaded;
}
