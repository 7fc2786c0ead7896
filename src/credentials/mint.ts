/**
 * OAuth 2.0 client-credentials token minting (RFC 6749 §4.4). One minter per
 * application identity: tokens are cached per scope set until `expires_in` minus a skew,
 * and concurrent callers for the same scope set share one request in flight.
 */
import type { Dispatcher } from 'undici';
import { undici } from '../broker/undici.js';
import { createUpstream } from '../broker/upstream.js';
import { maskKnownSecrets } from '../audit/secret-shape.js';
import { type BrokerError, brokerError } from '../errors.js';
import { isSecureTokenUrl, type OAuthClientCredentialsConnection } from './types.js';

/** How a `TokenMinter` mints: refresh skew, per-mint deadline, and the CA of the token endpoint. */
export interface TokenMinterOptions {
  /** refresh this long before the provider's expiry (default 60 s) */
  skewMs?: number;
  /** per-mint deadline (default 10 s) */
  timeoutMs?: number;
  /**
   * extra CA certificates (PEM) to trust for the token endpoint; the system store otherwise.
   * Either way the minter's own connections refuse private addresses (no allowances).
   */
  ca?: string | readonly string[];
  /** an undici dispatcher to send through (tests, egress proxies); overrides `ca` */
  dispatcher?: Dispatcher;
  /** clock, for tests */
  now?: () => number;
}

/** A minted token: never log or return `accessToken` anywhere but an Authorization header. */
export interface MintedToken {
  accessToken: string;
  /** epoch ms after which the cache will not hand it out */
  refreshAt: number;
}

const MAX_RESPONSE_BYTES = 64 * 1024;
const MAX_DESCRIPTION_CHARS = 300;

/** Scopes → the cache key: order and repeats do not make a different token. */
export function scopeKey(scopes: readonly string[]): string {
  return [...new Set(scopes)].sort().join(' ');
}

/** Mints and caches OAuth client-credentials tokens for one application identity. */
export class TokenMinter {
  readonly #conn: OAuthClientCredentialsConnection;
  readonly #skewMs: number;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #cache = new Map<string, MintedToken>();
  readonly #inFlight = new Map<string, Promise<MintedToken>>();
  /** mints actually sent, for tests and metrics */
  mints = 0;

  constructor(conn: OAuthClientCredentialsConnection, opts: TokenMinterOptions = {}) {
    this.#conn = conn;
    this.#skewMs = opts.skewMs ?? 60_000;
    this.#timeoutMs = opts.timeoutMs ?? 10_000;
    this.#now = opts.now ?? Date.now;
    // Without a dispatcher of the host's, the minter's own connections follow the broker's
    // address rule: the client secret is never sent to a loopback, private or link-local
    // address (a token URL pointing at the metadata service, say). A host that needs one
    // passes a dispatcher (the broker's, with `upstream.allowAddresses`).
    this.#ownsDispatcher = !opts.dispatcher;
    this.#dispatcher =
      opts.dispatcher ?? createUpstream(opts.ca !== undefined ? { ca: [opts.ca].flat() as string[] } : {});
  }

  /** A valid access token for `scopes` (cached, or minted once for all concurrent callers). */
  async token(scopes: readonly string[]): Promise<string> {
    const key = scopeKey(scopes);
    const hit = this.#cache.get(key);
    if (hit && hit.refreshAt > this.#now()) return hit.accessToken;
    let pending = this.#inFlight.get(key);
    if (!pending) {
      pending = this.#mint(scopes).finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, pending);
    }
    return (await pending).accessToken;
  }

  /** Drop every cached token (a rotated secret, a revoked grant). */
  clear(): void {
    this.#cache.clear();
  }

  /** Closes the minter's connections (when it opened them itself). */
  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }

  async #mint(scopes: readonly string[]): Promise<MintedToken> {
    const c = this.#conn;
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: c.clientId,
      client_secret: c.clientSecret,
    });
    // RFC 6749 §3.3: space-delimited, in the order the manifest declares them.
    if (scopes.length > 0) form.set('scope', scopes.join(' '));
    const host = safeHost(c.tokenUrl);
    // The client secret is in the form body: it goes over TLS or not at all, and never to a
    // URL that carries a user name or password of its own.
    if (!isSecureTokenUrl(c.tokenUrl))
      throw this.#fail({
        reason: 'insecure_url',
        tokenHost: host,
        errorCode: 'the token URL is not https:// or names a user',
      });
    this.mints += 1;
    const started = this.#now();
    let status: number;
    let text: string;
    try {
      const res = await undici().request(c.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
        signal: AbortSignal.timeout(this.#timeoutMs),
        dispatcher: this.#dispatcher,
      });
      status = res.statusCode;
      text = await readCapped(res.body, MAX_RESPONSE_BYTES);
    } catch (e) {
      // No `cause`: undici errors can carry the request options, and so the form body.
      const code = (e as { code?: unknown; name?: unknown }).code ?? (e as { name?: unknown }).name;
      throw this.#fail({ reason: 'network', tokenHost: host, errorCode: String(code ?? 'unknown') });
    }
    let body: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
        body = parsed as Record<string, unknown>;
    } catch {
      body = undefined;
    }
    if (
      status < 200 ||
      status > 299 ||
      !body ||
      typeof body.access_token !== 'string' ||
      body.access_token === ''
    ) {
      const details: Record<string, unknown> = {
        reason: status >= 200 && status < 300 ? 'invalid_response' : 'provider_error',
        tokenHost: host,
        status,
      };
      if (typeof body?.error === 'string') details.error = this.#mask(body.error).slice(0, 100);
      if (typeof body?.error_description === 'string')
        details.error_description = this.#mask(body.error_description).slice(0, MAX_DESCRIPTION_CHARS);
      throw this.#fail(details);
    }
    const expiresIn = Number(body.expires_in);
    // No expires_in (it is only RECOMMENDED): assume the common hour rather than minting per request.
    const lifetimeMs = (Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 3600) * 1000;
    const minted: MintedToken = {
      accessToken: body.access_token,
      refreshAt: started + lifetimeMs - this.#skewMs,
    };
    if (minted.refreshAt > this.#now()) this.#cache.set(scopeKey(scopes), minted);
    return minted;
  }

  #mask(s: string): string {
    return maskKnownSecrets(s, [this.#conn.clientSecret]);
  }

  #fail(details: Record<string, unknown>): BrokerError {
    const what = [details.status, details.error, details.error_description ?? details.errorCode]
      .filter((x) => x !== undefined)
      .join(' ');
    return brokerError(
      'CREDENTIAL_TOKEN_MINT_FAILED',
      { tokenHost: String(details.tokenHost), what },
      { details },
    );
  }
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(invalid token URL)';
  }
}

/**
 * A token endpoint's answer as text, read up to `max` bytes: past it the body is destroyed and
 * what was read is returned (the JSON parse that follows then fails as it should).
 */
export async function readCapped(
  body: AsyncIterable<Buffer> & { destroy?: () => void },
  max: number,
): Promise<string> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of body) {
    n += chunk.length;
    if (n > max) {
      body.destroy?.();
      break;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
