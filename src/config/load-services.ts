/**
 * The configuration's service blocks, as steps of a load: the store, the daemon, the
 * server, the upstream and the audit push, each resolved with its defaults, its secret
 * references checked and its files hidden from the CLIs; and the plain images a serving
 * process refuses.
 */
import { readFile } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { entries, isObj, type Load } from './load-context.js';
import type { ConfigProblems } from './problems.js';
import { configSchemas, parseIpPort, parseSocketMode, storeStringProblem } from './schema.js';
import { type ResolvedSecretRef, readSecret, refName, resolveRef } from './secrets.js';
import type { LoadedConfig } from './types.js';

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

/**
 * The store: a SQLite file (it and its companions hidden), `:memory:`, or PostgreSQL, whose
 * URL is a secret like every other, present now and its file hidden.
 */
export async function resolveStore(
  load: Load,
): Promise<{ store: string; storePostgres: LoadedConfig['storePostgres'] }> {
  const { secretRefSchema, storeSchema } = configSchemas();
  const rawStore = load.cfg['store'];
  let store =
    typeof rawStore === 'string' && rawStore !== '' && storeStringProblem(rawStore) === undefined
      ? rawStore === ':memory:'
        ? ':memory:'
        : load.abs(rawStore)
      : '';
  if (store !== '' && store !== ':memory:')
    for (const p of [store, `${store}-wal`, `${store}-shm`, `${store}-journal`, `${store}.runs`])
      load.hidden.add(p);
  let storePostgres: LoadedConfig['storePostgres'];
  const rawPg = isObj(rawStore) ? secretRefSchema.safeParse(rawStore['postgres']) : undefined;
  if (rawPg?.success) {
    const url = resolveRef(rawPg.data, load.abs);
    await load.checkRef(url, ['store', 'postgres']);
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
  return { store, storePostgres };
}

/** The daemon block: its socket hidden, its executor token present and strong enough. */
export async function resolveDaemon(load: Load): Promise<LoadedConfig['daemon']> {
  const { daemonSchema, secretRefSchema } = configSchemas();
  const rawDaemon = isObj(load.cfg['daemon']) ? load.cfg['daemon'] : {};
  if (typeof rawDaemon['socket'] === 'string' && isAbsolute(rawDaemon['socket']))
    load.hidden.add(rawDaemon['socket']);
  const token = secretRefSchema.safeParse(rawDaemon['executorToken']);
  const tokenRef = token.success ? resolveRef(token.data, load.abs) : undefined;
  if (tokenRef) await load.checkRef(tokenRef, ['daemon', 'executorToken'], true);
  const d = daemonSchema.safeParse(load.cfg['daemon']);
  if (!d.success || !d.data) return undefined;
  const mode = parseSocketMode(d.data.socketMode ?? DEFAULT_SOCKET_MODE)!;
  const daemon: NonNullable<LoadedConfig['daemon']> = {
    socket: d.data.socket,
    socketMode: `0${mode.toString(8).padStart(3, '0')}`,
    cliTier: d.data.cliTier ?? 'read',
    context: d.data.context ?? 'agent-step',
  };
  if (tokenRef) daemon.executorToken = tokenRef;
  return daemon;
}

/**
 * A plain image where a daemon or server serves the configuration: a CLI run with that
 * process's own file access could read the secrets it holds (`curl -d @<secret file>`).
 */
export function refusePlainImages(
  load: Load,
  configs: ReadonlyMap<string, { profile: 'isolated' | 'plain' }>,
  serving: boolean | undefined,
): void {
  if (!isObj(load.cfg['daemon']) && !serving) return;
  for (const [name, img] of configs)
    if (img.profile === 'plain')
      load.out.add(
        'CONFIG_IMAGE_PLAIN_UNDER_DAEMON',
        ['images', name, 'profile'],
        `image "${name}" is plain, but a daemon or server serves this configuration to agents: an argument such as -d @<file> would read its secrets; use profile isolated`,
      );
}

/** The server's token references, read per request. */
export interface ServeRefs {
  executor?: ResolvedSecretRef;
  mcp?: ResolvedSecretRef;
  reviewers: [string, ResolvedSecretRef][];
}

/**
 * The serve block with its defaults (the tier and context fall back to the daemon's); its
 * token references are checked like every secret.
 */
export async function resolveServe(
  load: Load,
  daemon: LoadedConfig['daemon'],
): Promise<{ serve: LoadedConfig['serve']; refs: ServeRefs }> {
  const { secretRefSchema, serveSchema } = configSchemas();
  const rawServe = isObj(load.cfg['serve']) ? load.cfg['serve'] : {};
  const refs: ServeRefs = { reviewers: [] };
  for (const role of ['executor', 'mcp'] as const) {
    const r = secretRefSchema.safeParse(rawServe[`${role}Token`]);
    if (r.success) {
      refs[role] = resolveRef(r.data, load.abs);
      await load.checkRef(refs[role], ['serve', `${role}Token`], true);
    }
  }
  for (const [who, raw] of entries(rawServe['reviewers'])) {
    const r = secretRefSchema.safeParse(raw);
    if (!r.success) continue;
    const ref = resolveRef(r.data, load.abs);
    await load.checkRef(ref, ['serve', 'reviewers', who], true);
    refs.reviewers.push([who, ref]);
  }
  const sv = serveSchema.safeParse(load.cfg['serve']);
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
  return { serve, refs };
}

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

/** The upstream block: where hosts connect to, the addresses allowed, and its CA bundle read now. */
export async function resolveUpstream(load: Load): Promise<LoadedConfig['upstream']> {
  const { upstreamSchema } = configSchemas();
  const rawUpstream = isObj(load.cfg['upstream']) ? load.cfg['upstream'] : {};
  const caPem =
    typeof rawUpstream['caFile'] === 'string' && rawUpstream['caFile'] !== ''
      ? await readCa(load.abs(rawUpstream['caFile']), load.out)
      : undefined;
  const u = upstreamSchema.safeParse(load.cfg['upstream']);
  if (!u.success || !u.data) return undefined;
  const upstream: NonNullable<LoadedConfig['upstream']> = {
    connectTo: new Map(Object.entries(u.data.connectTo ?? {}).map(([h, v]) => [h, parseIpPort(v)!])),
    allowAddresses: [...(u.data.allowAddresses ?? [])],
  };
  if (caPem !== undefined) upstream.caPem = caPem;
  return upstream;
}

/** The audit push: its header values are secrets like every other, present now, their files hidden, read per push. */
export async function resolveAuditOtlp(load: Load): Promise<LoadedConfig['auditOtlp']> {
  const { auditOtlpSchema, secretRefSchema } = configSchemas();
  const rawAudit = isObj(load.cfg['audit']) ? load.cfg['audit'] : {};
  const rawOtlp = isObj(rawAudit['otlp']) ? rawAudit['otlp'] : {};
  const headerRefs: Record<string, ResolvedSecretRef> = {};
  for (const [name, raw] of entries(rawOtlp['headers'])) {
    const r = secretRefSchema.safeParse(raw);
    if (!r.success) continue;
    headerRefs[name] = resolveRef(r.data, load.abs);
    await load.checkRef(headerRefs[name], ['audit', 'otlp', 'headers', name]);
  }
  const ao = auditOtlpSchema.safeParse(rawAudit['otlp']);
  if (!ao.success) return undefined;
  const env = load.env;
  return {
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
}
