/**
 * GitHub App installation tokens narrowed to the call's tier. Per call: sign the app's JWT
 * (RS256, node:crypto), exchange it at `POST /app/installations/{id}/access_tokens` for a
 * token holding only the tier's permission set (and repositories), and cache that token per
 * (installation, tier, repository set) until shortly before it expires. A read call never
 * gets a token that can write: the tiers never share a token, and a grant wider than the
 * request is refused.
 *
 * The private key, the JWT and the token never enter an error, a log or an event: what a
 * call may record is the grant (`InstallationGrant`: permissions, repositories, expiry).
 */
import { createHash, createPrivateKey, type KeyObject, sign } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { undici } from '../broker/undici.js';
import { createUpstream } from '../broker/upstream.js';
import { maskKnownSecrets } from '../audit/secret-shape.js';
import { type BrokerError, brokerError } from '../errors.js';
import type { Tier } from '../policy/types.js';
import { readCapped, type TokenMinterOptions } from './mint.js';
import type { GithubAppConnection, GithubPermissionLevel, GithubPermissions } from './types.js';

/** Each tier's permission set when the connection names none for it. */
export const GITHUB_APP_DEFAULT_PERMISSIONS: Readonly<Record<Tier, GithubPermissions>> = {
  read: { contents: 'read', issues: 'read', pull_requests: 'read', metadata: 'read' },
  write: { contents: 'write', issues: 'write', pull_requests: 'write', metadata: 'read' },
};

/** What a call's audit records of its token: never the token. */
export interface InstallationGrant {
  kind: 'github_app';
  tier: Tier;
  /** the permissions GitHub granted (a subset of the tier's set) */
  permissions: Record<string, GithubPermissionLevel>;
  /** the repositories the token is narrowed to, when it is */
  repositories?: string[];
  /** ISO 8601: when GitHub expires the token */
  expiresAt: string;
}

interface Cached {
  accessToken: string;
  grant: InstallationGrant;
  /** epoch ms after which the cache will not hand it out */
  refreshAt: number;
}

const LEVEL_RANK: Readonly<Record<string, number>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, number>, { read: 1, write: 2, admin: 3 }),
);
const PERMISSION_NAME = /^[a-z][a-z0-9_]{0,63}$/;
const REPOSITORY_NAME = /^[A-Za-z0-9._-]{1,100}$/;
const APP_ID = /^[A-Za-z0-9._-]{1,64}$/;
const INSTALLATION_ID = /^[0-9]{1,20}$/;
const MAX_RESPONSE_BYTES = 256 * 1024;
const MAX_ENTRIES = 256;
/** GitHub refuses an app JWT that lives longer than 10 minutes; clocks drift, so less. */
const JWT_LIFETIME_S = 9 * 60;

/** The API base of the GitHub the app lives on: api.github.com, or a server's `/api/v3`. */
export function githubApiBase(endpointHost?: string): string {
  return endpointHost ? `https://${endpointHost}/api/v3` : 'https://api.github.com';
}

/**
 * The permission set of `tier` for a connection: its own or the default. Throws when the
 * connection's sets are not readable, or when the read tier's set asks for more than read.
 * @throws BrokerError INVALID_TOOL_INPUT
 */
export function tierPermissions(conn: GithubAppConnection, tier: Tier): GithubPermissions {
  const set = conn.permissions?.[tier] ?? GITHUB_APP_DEFAULT_PERMISSIONS[tier];
  const entries = typeof set === 'object' && set !== null ? Object.entries(set) : [];
  const bad = entries.length === 0 || entries.some(([k, v]) => !PERMISSION_NAME.test(k) || !LEVEL_RANK[v]);
  if (bad)
    invalid(`connection.permissions.${tier}`, 'must map GitHub App permission names to read, write or admin');
  if (tier === 'read' && entries.some(([, v]) => v !== 'read'))
    invalid('connection.permissions.read', "may only hold read levels: a read call's token never writes");
  return set;
}

/**
 * Checks a GitHub App connection's fields (not its key: that is read when a token is minted).
 * @throws BrokerError INVALID_TOOL_INPUT naming the field
 */
export function checkGithubApp(conn: GithubAppConnection): void {
  if (typeof conn.appId !== 'string' || !APP_ID.test(conn.appId))
    invalid('connection.appId', 'must be the app id or client id (letters, digits, . _ -)');
  if (typeof conn.installationId !== 'string' || !INSTALLATION_ID.test(conn.installationId))
    invalid('connection.installationId', 'must be the installation id (digits)');
  if (typeof conn.privateKey !== 'string' || conn.privateKey === '')
    invalid('connection.privateKey', "must be the app's private key (PEM)");
  const repos = conn.repositories;
  if (
    repos !== undefined &&
    (!Array.isArray(repos) ||
      repos.length === 0 ||
      !repos.every((r) => typeof r === 'string' && REPOSITORY_NAME.test(r)))
  )
    invalid('connection.repositories', 'must list repository names (without the owner), or be left out');
  tierPermissions(conn, 'read');
  tierPermissions(conn, 'write');
}

function invalid(field: string, what: string): never {
  throw brokerError('INVALID_TOOL_INPUT', { reason: `${field} ${what}.` }, { details: { field } });
}

/**
 * Installation tokens of any number of GitHub App connections, cached per (API, app,
 * installation, key, tier, permission set, repository set). One per runner: calls at the same tier
 * share a token; concurrent callers share one exchange in flight.
 */
export class InstallationTokens {
  readonly #skewMs: number;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  readonly #opts: TokenMinterOptions;
  #own: Dispatcher | undefined;
  readonly #cache = new Map<string, Cached>();
  readonly #inFlight = new Map<string, Promise<Cached>>();
  /** exchanges actually sent, for tests and metrics */
  mints = 0;

  constructor(opts: TokenMinterOptions = {}) {
    this.#opts = opts;
    this.#skewMs = opts.skewMs ?? 60_000;
    this.#timeoutMs = opts.timeoutMs ?? 10_000;
    this.#now = opts.now ?? Date.now;
  }

  /** A valid token for `tier` of this installation, and its grant (cached, or minted once for all concurrent callers). */
  async token(
    conn: GithubAppConnection,
    tier: Tier,
    apiBase: string,
  ): Promise<{ accessToken: string; grant: InstallationGrant }> {
    const permissions = tierPermissions(conn, tier);
    const repositories = conn.repositories ? [...new Set(conn.repositories)].sort() : undefined;
    const key = [
      apiBase,
      conn.appId,
      conn.installationId,
      createHash('sha256').update(conn.privateKey).digest('hex'),
      tier,
      JSON.stringify(Object.entries(permissions).sort(([a], [b]) => (a < b ? -1 : 1))),
      repositories?.join(',') ?? '*',
    ].join('\n');
    const hit = this.#cache.get(key);
    if (hit && hit.refreshAt > this.#now()) return hit;
    let pending = this.#inFlight.get(key);
    if (!pending) {
      pending = this.#mint(conn, tier, apiBase, permissions, repositories)
        .then((c) => {
          this.#keep(key, c);
          return c;
        })
        .finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, pending);
    }
    return pending;
  }

  /** Drop every cached token (a rotated key, a revoked installation). */
  clear(): void {
    this.#cache.clear();
  }

  /** Closes the connections it opened itself (none when it was given a dispatcher). */
  async close(): Promise<void> {
    await this.#own?.close();
    this.#own = undefined;
  }

  #keep(key: string, c: Cached): void {
    if (c.refreshAt <= this.#now()) return;
    const now = this.#now();
    for (const [k, v] of this.#cache) if (v.refreshAt <= now) this.#cache.delete(k);
    // the oldest first: a Map iterates in insertion order
    while (this.#cache.size >= MAX_ENTRIES) this.#cache.delete(this.#cache.keys().next().value as string);
    this.#cache.set(key, c);
  }

  #dispatch(): Dispatcher {
    // Read when the first token is minted: the runner's dispatcher is a getter that starts undici.
    if (this.#opts.dispatcher) return this.#opts.dispatcher;
    // Without a dispatcher of the host's, the address rule holds: the JWT is never sent to a
    // loopback, private or link-local address.
    this.#own ??= createUpstream(
      this.#opts.ca !== undefined ? { ca: [this.#opts.ca].flat() as string[] } : {},
    );
    return this.#own;
  }

  async #mint(
    conn: GithubAppConnection,
    tier: Tier,
    apiBase: string,
    permissions: GithubPermissions,
    repositories: string[] | undefined,
  ): Promise<Cached> {
    const apiHost = new URL(apiBase).host;
    const fail = (details: Record<string, unknown>): BrokerError => {
      const what = [details.status, details.message ?? details.errorCode]
        .filter((x) => x !== undefined)
        .join(' ');
      return brokerError(
        'CREDENTIAL_GITHUB_APP_TOKEN_FAILED',
        { apiHost, what: String(what) },
        { details: { apiHost, tier, ...details } },
      );
    };
    let key: KeyObject;
    try {
      key = createPrivateKey(conn.privateKey);
    } catch {
      // no cause: it may quote the key
      throw fail({ reason: 'private_key_invalid', errorCode: 'the private key is not a PEM private key' });
    }
    if (key.asymmetricKeyType !== 'rsa')
      throw fail({ reason: 'private_key_invalid', errorCode: 'the private key is not an RSA key' });
    const started = this.#now();
    const jwt = appJwt(conn.appId, key, Math.floor(started / 1000));
    const body: Record<string, unknown> = { permissions };
    if (repositories) body.repositories = repositories;
    this.mints += 1;
    let status: number;
    let text: string;
    try {
      const res = await undici().request(
        `${apiBase}/app/installations/${encodeURIComponent(conn.installationId)}/access_tokens`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${jwt}`,
            accept: 'application/vnd.github+json',
            'content-type': 'application/json',
            'user-agent': 'clibroker',
            'x-github-api-version': '2022-11-28',
          },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(this.#timeoutMs),
          dispatcher: this.#dispatch(),
        },
      );
      status = res.statusCode;
      text = await readCapped(res.body, MAX_RESPONSE_BYTES);
    } catch (e) {
      // No `cause`: undici errors can carry the request options, and so the JWT.
      const code = (e as { code?: unknown; name?: unknown }).code ?? (e as { name?: unknown }).name;
      throw fail({ reason: 'network', errorCode: String(code ?? 'unknown') });
    }
    let res: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
        res = parsed as Record<string, unknown>;
    } catch {
      res = undefined;
    }
    const mask = (s: string) => maskKnownSecrets(s, [jwt, conn.privateKey]).slice(0, 300);
    if (status !== 201 && status !== 200) {
      const details: Record<string, unknown> = { reason: 'provider_error', status };
      if (typeof res?.message === 'string') details.message = mask(res.message);
      throw fail(details);
    }
    const token = res?.token;
    const expires = Date.parse(String(res?.expires_at));
    const granted = res?.permissions;
    if (typeof token !== 'string' || token === '' || !Number.isFinite(expires) || !isPermissions(granted))
      throw fail({
        reason: 'invalid_response',
        status,
        errorCode: 'no token, expiry or permissions in the answer',
      });
    // GitHub grants what was asked, and metadata:read with anything; more than that is refused,
    // so a read call can never be handed a token that writes.
    const wider = Object.entries(granted).filter(
      ([k, v]) =>
        !(k === 'metadata' && v === 'read') &&
        !((LEVEL_RANK[v] ?? 9) <= (LEVEL_RANK[permissions[k] ?? ''] ?? 0)),
    );
    if (wider.length > 0)
      throw fail({
        reason: 'granted_too_much',
        status,
        errorCode: `granted more than the ${tier} tier's set: ${wider.map(([k, v]) => `${k}:${v}`).join(', ')}`,
      });
    const grant: InstallationGrant = {
      kind: 'github_app',
      tier,
      permissions: { ...granted },
      expiresAt: new Date(expires).toISOString(),
    };
    const names = Array.isArray(res?.repositories)
      ? res.repositories
          .map((r) => (r as { name?: unknown } | null)?.name)
          .filter((n): n is string => typeof n === 'string')
      : undefined;
    if (repositories || (names && names.length > 0))
      grant.repositories = names?.length ? names : repositories;
    return {
      accessToken: token,
      grant,
      refreshAt: Math.min(expires, started + 3600_000) - this.#skewMs,
    };
  }
}

/** The app's JWT: RS256, issued 60 s in the past (clock drift), expiring within 10 minutes. */
export function appJwt(appId: string, key: KeyObject | string, nowS: number): string {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const signing = `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64({ iat: nowS - 60, exp: nowS + JWT_LIFETIME_S, iss: appId })}`;
  return `${signing}.${sign('sha256', Buffer.from(signing), key).toString('base64url')}`;
}

function isPermissions(v: unknown): v is Record<string, GithubPermissionLevel> {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    Object.values(v).every((x) => typeof x === 'string' && LEVEL_RANK[x] !== undefined)
  );
}
