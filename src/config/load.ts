/**
 * `loadConfig`: the operator configuration, validated, hashed and resolved, or refused as
 * a whole. Every problem is collected first (the shape, then each secret, image, manifest
 * and CLI on whatever parts are well-formed), then one CONFIG_INVALID lists them all:
 * nothing is ever half-loaded.
 *
 *   shape (zod) → images pinned → secrets present → manifests hashed and valid
 *     → each CLI: image known, entrypoint the pinned program, tool name free, credentials plannable
 */
import { readFile, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { describeFromHelpTree } from '../cli/vendor.js';
import { planCredentials } from '../credentials/binding.js';
import type { Connection } from '../credentials/types.js';
import { BrokerError, isBrokerError } from '../errors.js';
import { checkImage } from './images.js';
import { checkManifest } from './manifests.js';
import { ConfigProblems } from './problems.js';
import { connectionSchema, daemonSchema, imageSchema, installSchema, parseIpPort, parseSocketMode, secretRefSchema, shapeProblems, upstreamSchema } from './schema.js';
import { type Env, type ResolvedSecretRef, lookupSecret, readSecret, resolveRef } from './secrets.js';
import type { ConfiguredTool, ConnectionConfig, InstalledExtension, LoadedConfig, OperatorConfig, PinnedImage } from './types.js';

export interface LoadOptions {
  /** where relative paths of an object configuration resolve; default the current directory (a file's own directory for a path) */
  baseDir?: string;
  /** the environment secrets are read from, at load and at every call; default process.env */
  env?: Record<string, string | undefined>;
}

export const DEFAULT_DEADLINE_SECONDS = 270;
const DEFAULT_SOCKET_MODE = '0660';
const PLACEHOLDER = 'clibroker-config-check';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const entries = (v: unknown): [string, unknown][] => (isObj(v) ? Object.entries(v) : []);

/** The secret fields of a connection, with their names. */
function secretFields(c: ConnectionConfig): [string, ResolvedSecretRef][] {
  switch (c.kind) {
    case 'oauth_access_token':
      return [['accessToken', c.accessToken]];
    case 'api_key':
      return [['apiKey', c.apiKey]];
    case 'bot_token':
      return [['token', c.token]];
    case 'basic':
      return [['password', c.password]];
    case 'oauth_client_credentials':
      return [['clientSecret', c.clientSecret]];
  }
}

function withSecrets(c: ConnectionConfig, secret: (field: string) => string): Connection {
  switch (c.kind) {
    case 'oauth_access_token':
      return { kind: c.kind, accessToken: secret('accessToken') };
    case 'api_key':
      return { kind: c.kind, apiKey: secret('apiKey') };
    case 'bot_token':
      return { kind: c.kind, token: secret('token') };
    case 'basic':
      return { kind: c.kind, username: c.username, password: secret('password') };
    case 'oauth_client_credentials': {
      const { kind, clientId, tenantId, tokenUrl, scopes } = c;
      return { kind, clientId, tokenUrl, clientSecret: secret('clientSecret'), ...(tenantId === undefined ? {} : { tenantId }), ...(scopes === undefined ? {} : { scopes: [...scopes] }) };
    }
  }
}

function resolveConnection(c: ConnectionConfig, abs: (p: string) => string): ConnectionConfig {
  const out = { ...c } as Record<string, unknown>;
  for (const [field, ref] of secretFields(c)) out[field] = resolveRef(ref, abs);
  return out as unknown as ConnectionConfig;
}

/** The upstream CA bundle: readable, and holding a certificate. */
async function readCa(file: string, out: ConfigProblems): Promise<string | undefined> {
  let pem: string;
  try {
    pem = await readFile(file, 'utf8');
  } catch (e) {
    out.add('CONFIG_FIELD_INVALID', ['upstream', 'caFile'], `cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    return undefined;
  }
  if (pem.includes('-----BEGIN CERTIFICATE-----')) return pem;
  out.add('CONFIG_FIELD_INVALID', ['upstream', 'caFile'], `${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return undefined;
}

async function readConfigFile(file: string): Promise<unknown> {
  const out = new ConfigProblems();
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    out.add('CONFIG_FIELD_INVALID', [], `cannot read the configuration file ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    out.throwIfAny(`the configuration ${file}`);
  }
  try {
    return JSON.parse(text!);
  } catch (e) {
    // V8's message quotes the text around the error, which may hold a secret written inline
    const m = /position (\d+)/.exec((e as Error).message);
    out.add('CONFIG_FIELD_INVALID', [], `the configuration file ${file} is not JSON${m ? ` (a syntax error at position ${m[1]})` : ''}`);
    out.throwIfAny(`the configuration ${file}`);
  }
}

/**
 * Load an operator configuration: a JSON file path, or the same shape as an object.
 * @throws BrokerError CONFIG_INVALID with `details.problems` listing every problem
 */
export async function loadConfig(source: string | OperatorConfig, opts: LoadOptions = {}): Promise<LoadedConfig> {
  const env: Env = opts.env ?? process.env;
  const file = typeof source === 'string' ? resolve(source) : undefined;
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
  const imageConfigs = new Map<string, { executable: string }>();
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
    if (pinned) images.set(name, pinned);
  }

  // secrets: present now, and hidden from the CLI
  const checkRef = async (ref: ResolvedSecretRef, path: (string | number)[]) => {
    if ('file' in ref) hidden.add(ref.file);
    const r = await lookupSecret(ref, env);
    if (!r.ok) out.add(r.code, path, `${r.why}`);
  };

  // extensions and their CLIs
  const extensions = new Map<string, InstalledExtension>();
  const tools: ConfiguredTool[] = [];
  const toolNames = new Map<string, string>();
  for (const [key, raw] of entries(cfg['extensions'])) {
    const r = installSchema.safeParse(raw);
    const rawObj = isObj(raw) ? raw : {};
    const conn = connectionSchema.safeParse(rawObj['connection']);
    const connection = conn.success ? resolveConnection(conn.data as ConnectionConfig, abs) : undefined;
    if (connection) for (const [field, ref] of secretFields(connection)) await checkRef(ref, ['extensions', key, 'connection', field]);
    // as for images: the manifest and the CLIs are checked whenever their own fields are well-formed
    const m = installSchema.shape.manifest.safeParse(rawObj['manifest']);
    const sha = installSchema.shape.sha256.safeParse(rawObj['sha256']);
    const endpoint = installSchema.shape.endpoint.safeParse(rawObj['endpoint']);
    if (!m.success || !sha.success) continue;
    const manifestFile = typeof m.data === 'string' ? abs(m.data) : undefined;
    const manifest = await checkManifest(key, m.data, manifestFile, sha.data, out);
    if (!manifest || !connection || !endpoint.success) continue;
    const ext: InstalledExtension = { id: key, manifest, sha256: sha.data, connection, identity: r.data?.identity ?? 'assigned', assignment: r.data?.assignment ?? 'default' };
    if (endpoint.data !== undefined) ext.endpoint = endpoint.data;
    extensions.set(key, ext);
    manifest.clis.forEach((cli, i) => {
      const at = ['extensions', key, 'manifest', 'clis', i];
      const id = `${key}:cli:${cli.id}`;
      const name = `${cli.id}_cli`;
      const imgCfg = imageConfigs.get(cli.binary.image);
      const known = entries(cfg['images']).map(([n]) => n);
      if (!known.includes(cli.binary.image)) {
        out.add('CONFIG_IMAGE_UNKNOWN', [...at, 'binary', 'image'], `the CLI ${cli.id} runs image "${cli.binary.image}", which images does not pin (pinned: ${known.join(', ') || 'none'})`);
      } else if (imgCfg && cli.binary.entrypoint !== imgCfg.executable && cli.binary.entrypoint !== basename(imgCfg.executable)) {
        out.add('CONFIG_IMAGE_ENTRYPOINT_MISMATCH', [...at, 'binary', 'entrypoint'], `the CLI runs "${cli.binary.entrypoint}", but image "${cli.binary.image}" pins ${imgCfg.executable}: the entrypoint must be that path or ${basename(imgCfg.executable)}`);
      }
      const taken = toolNames.get(name);
      if (taken !== undefined) out.add('CONFIG_TOOL_NAME_CONFLICT', [...at, 'id'], `the tool name ${name} is already offered by ${taken}; install only one of them`);
      else toolNames.set(name, id);
      try {
        planCredentials({ extension: manifest, cliId: cli.id, connection: withSecrets(connection, () => PLACEHOLDER), ...(ext.endpoint === undefined ? {} : { endpoint: ext.endpoint }) });
      } catch (e) {
        if (!isBrokerError(e)) throw e;
        out.add('CONFIG_CLI_NOT_RUNNABLE', at, `the broker would refuse every call of ${cli.id}: ${e.message}`);
      }
      const image = images.get(cli.binary.image);
      if (image) tools.push({ id, name, extensionId: key, cliId: cli.id, description: describeFromHelpTree(cli), image });
    });
  }

  // the store, the daemon, the upstream
  const store = typeof cfg['store'] === 'string' && cfg['store'] !== '' ? (cfg['store'] === ':memory:' ? ':memory:' : abs(cfg['store'])) : '';
  if (store !== '' && store !== ':memory:') for (const p of [store, `${store}-wal`, `${store}-shm`, `${store}-journal`, `${store}.runs`]) hidden.add(p);
  let daemon: LoadedConfig['daemon'];
  const rawDaemon = isObj(cfg['daemon']) ? cfg['daemon'] : {};
  if (typeof rawDaemon['socket'] === 'string' && isAbsolute(rawDaemon['socket'])) hidden.add(rawDaemon['socket']);
  const token = secretRefSchema.safeParse(rawDaemon['executorToken']);
  const tokenRef = token.success ? resolveRef(token.data, abs) : undefined;
  if (tokenRef) await checkRef(tokenRef, ['daemon', 'executorToken']);
  const d = daemonSchema.safeParse(cfg['daemon']);
  if (d.success && d.data) {
    const mode = parseSocketMode(d.data.socketMode ?? DEFAULT_SOCKET_MODE)!;
    daemon = { socket: d.data.socket, socketMode: `0${mode.toString(8).padStart(3, '0')}`, cliTier: d.data.cliTier ?? 'read', context: d.data.context ?? 'agent-step' };
    if (tokenRef) daemon.executorToken = tokenRef;
  }

  let upstream: LoadedConfig['upstream'];
  const rawUpstream = isObj(cfg['upstream']) ? cfg['upstream'] : {};
  const caPem = typeof rawUpstream['caFile'] === 'string' && rawUpstream['caFile'] !== '' ? await readCa(abs(rawUpstream['caFile']), out) : undefined;
  const u = upstreamSchema.safeParse(cfg['upstream']);
  if (u.success && u.data) {
    upstream = { connectTo: new Map(Object.entries(u.data.connectTo ?? {}).map(([h, v]) => [h, parseIpPort(v)!])), allowAddresses: [...(u.data.allowAddresses ?? [])] };
    if (caPem !== undefined) upstream.caPem = caPem;
  }

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
    deadlineMs: (valid.deadlineSeconds ?? DEFAULT_DEADLINE_SECONDS) * 1000,
    images,
    extensions,
    tools,
    withheld: [],
    hiddenPaths: [...hidden],
    async connection(extensionId) {
      const ext = extensions.get(extensionId);
      if (!ext) {
        throw new BrokerError('TOOL_VENDOR_CLI_NOT_OFFERED', { message: `TOOL_VENDOR_CLI_NOT_OFFERED: the configuration installs no extension "${extensionId.slice(0, 64)}".`, details: { extensions: [...extensions.keys()] } });
      }
      const values = new Map<string, string>();
      for (const [field, ref] of secretFields(ext.connection)) values.set(field, await readSecret(ref, env, `extensions.${extensionId}.connection.${field}`));
      return withSecrets(ext.connection, (f) => values.get(f)!);
    },
    async executorToken() {
      const ref = daemon?.executorToken;
      return ref === undefined ? undefined : readSecret(ref, env, 'daemon.executorToken');
    },
  };
  if (file !== undefined) loaded.file = file;
  if (daemon) loaded.daemon = daemon;
  if (upstream) loaded.upstream = upstream;
  return loaded;
}
