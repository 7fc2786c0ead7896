/**
 * The HTTP server of `clibroker serve`: one process holding the configuration, the secrets
 * and the store, with three front doors over the same host and the same held approvals.
 *
 *   GET  /healthz, /openapi.json                  no token (/healthz: 503 while the store cannot answer or refuses audit writes)
 *   /v1/…                                         the Platform API (api.ts): executor / reviewer tokens
 *   POST|GET|DELETE /mcp                          MCP Streamable HTTP (the SDK's transport): the MCP token
 *   /review                                       the reviewer page (review.ts): a reviewer's session
 *
 * Plain node:http, as the daemon: no framework to trust with the bodies, the same bounded
 * body reader, and the SDK's transport takes node's request and response as they are.
 *
 * Every route first checks that the request names this server (DNS rebinding): the Host
 * header must be one of the server's own names (`ownNames`), else 421; an Origin header, when
 * present, must be one of its origins, else SERVE_FORBIDDEN. One rule for every door, in
 * front of the SDK's transport (whose own host and origin options are deprecated).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, isIP } from 'node:net';
import type { Logger } from 'pino';
import { redactLogText } from '../audit/logger.js';
import type { ServeTokens } from '../config/types.js';
import { drain } from '../front/body.js';
import { logRefused, readSecretOrRefuse } from '../front/wire.js';
import { type BrokerError, brokerError } from '../errors.js';
import type { CallOptions, ToolHost } from '../host/types.js';
import type { Tier } from '../policy/types.js';
import type { Store } from '../store/types.js';
import { api } from './api.js';
import { authorize, type Role } from './auth.js';
import { createHolder, type Holder } from './hold.js';
import { THROTTLE_LIMITS, Throttle } from './throttle.js';
import { McpSessions, type McpSdk, mcpDoor, mcpSdk, rpcError } from './mcp-door.js';
import { OPENAPI } from './openapi.js';
import { review, reviewErrorPage, sendReviewError } from './review.js';
import { type ReviewSessionLimits, ReviewSessions } from './sessions.js';
import { errorHeaders, ServeRefusal, sendJson, wireError } from './wire.js';

export interface HttpServerOptions {
  /** default 127.0.0.1 */
  host?: string;
  /** default 8787; 0 picks a free port */
  port?: number;
  /** the origin of review links; default the bound address */
  publicUrl?: string;
  /** the tokens, read for every request (a rotated secret takes effect at once) */
  tokens: () => Promise<ServeTokens>;
  approvalTimeoutMs: number;
  /**
   * the tier and context of MCP calls (the Platform API's caller passes its own); `tierSource`
   * defaults to `serve.cliTier`, the key `clibroker serve` reads them from
   */
  mcp: Required<Pick<CallOptions, 'cliTier' | 'context'>> & Pick<CallOptions, 'tierSource'>;
  /**
   * The highest tier the Platform API's executor may request: a requested write above it
   * runs at read. `clibroker serve` passes `serve.executorMaxTier` (whose default is read);
   * absent here, the executor's tier is capped only by the ceiling and the assignment.
   */
  executorMaxTier?: Tier;
  /** how often a waiting call reads the store for decisions made elsewhere (default 500 ms) */
  pollMs?: number;
  /** a long MCP call sends a progress notification this often (default 5 s) */
  progressIntervalMs?: number;
  /** on close, calls still running after this are cut (default 30 s) */
  closeGraceMs?: number;
  /** at most this many MCP sessions at once (default 64) */
  maxMcpSessions?: number;
  /** an MCP session that sent nothing for this long is ended (default the longer of 30 min and the approval timeout + 10 min) */
  mcpIdleMs?: number;
  /** the review sessions' lifetimes and bounds (default REVIEW_SESSION_LIMITS); tests set a clock */
  reviewSessions?: Partial<ReviewSessionLimits>;
  logger?: Logger;
  version?: string;
}

export interface HttpServer {
  /** `http://127.0.0.1:8787` */
  url: string;
  port: number;
  holder: Holder;
  /** Stop: waiting calls end with SERVE_STOPPED, running ones are answered, sessions closed. */
  close(): Promise<void>;
}

/** How a request may name this server: its Host header, and the Origin of a page it served. */
export interface OwnNames {
  /** the Host header names this server */
  host(value: string | undefined): boolean;
  /** the Origin header is one of this server's origins */
  origin(value: string): boolean;
}

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/** How long /healthz waits for the store before it says this replica cannot serve. */
const HEALTH_PING_MS = 2_000;

const isLoopback = (address: string): boolean =>
  /^127\./.test(address) || address === '::1' || /^::ffff:127\./.test(address);

/** `host[:port]`, the host lower-cased (an IPv6 literal in brackets); undefined when it is not one. */
function authority(value: string): { host: string; port?: number } | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[^\s:/?#@[\]\\]+)(?::(\d{1,5}))?$/i.exec(value);
  if (!m) return undefined;
  return { host: m[1]!.toLowerCase(), ...(m[2] !== undefined ? { port: Number(m[2]) } : {}) };
}

/**
 * The names this server answers to (docs/serve.md, "Host and Origin"), from the address it
 * bound and `serve.publicUrl`:
 *  - `publicUrl`'s host and port;
 *  - the bound address and port; bound to loopback, also `127.0.0.1`, `localhost` and `[::1]`
 *    on that port; bound to every address (`0.0.0.0`, `::`), those and any IP literal on that
 *    port: an IP literal is resolved by no DNS, so no page can rebind it.
 * A DNS name other than `localhost` and `publicUrl`'s — what a rebinding page sends — is never
 * one. A Host without a port means port 80 (or 443, a TLS proxy passing `publicUrl`'s host on).
 * The origins are `http://` and one of these names, and `publicUrl`'s own origin.
 */
export function ownNames(bound: { address: string; port: number }, publicUrl?: string): OwnNames {
  const names = new Set<string>();
  const addr = bound.address.toLowerCase();
  names.add(`${isIP(addr) === 6 ? `[${addr}]` : addr}:${bound.port}`);
  const everyAddress = addr === '0.0.0.0' || addr === '::';
  // every address includes loopback
  if (isLoopback(addr) || everyAddress) for (const n of LOOPBACK_NAMES) names.add(`${n}:${bound.port}`);
  let publicOrigin: string | undefined;
  if (publicUrl) {
    const u = new URL(publicUrl);
    publicOrigin = u.origin;
    names.add(`${u.hostname}:${u.port || (u.protocol === 'https:' ? 443 : 80)}`);
  }
  const named = (value: string, defaultPorts: readonly number[]): boolean => {
    const a = authority(value);
    if (!a) return false;
    return (a.port !== undefined ? [a.port] : defaultPorts).some(
      (p) =>
        names.has(`${a.host}:${p}`) ||
        (everyAddress && p === bound.port && isIP(a.host.replace(/^\[|\]$/g, '')) !== 0),
    );
  };
  return {
    host: (value) => value !== undefined && named(value, [80, 443]),
    origin(value) {
      const v = value.toLowerCase();
      if (v === publicOrigin) return true;
      return v.startsWith('http://') && named(v.slice('http://'.length), [80]);
    },
  };
}

/** The state every request of one server reads: the host, the store and the server's own parts. */
interface Front {
  host: ToolHost;
  store: Store;
  opts: HttpServerOptions;
  log: Logger | undefined;
  throttle: Throttle;
  reviewSessions: ReviewSessions;
  sdk: McpSdk;
  sessions: McpSessions;
  /** set once the server listens: the names it answers to, and the holder its calls run through */
  names?: OwnNames;
  holder?: Holder;
}

/** node:http's bounds on a request: slow heads and bodies are cut, big heads refused. */
const SERVER_LIMITS = {
  headersTimeout: 10_000,
  requestTimeout: 120_000,
  keepAliveTimeout: 5_000,
  maxHeaderSize: 16 * 1024,
};

/**
 * Start the server: the MCP sessions, then listen, then the names it answers to and the
 * holder (whose review links need the bound address).
 */
export async function startHttpServer(
  host: ToolHost,
  store: Store,
  opts: HttpServerOptions,
): Promise<HttpServer> {
  const front = await frontOf(host, store, opts);
  const server = createServer(SERVER_LIMITS, (req, res) => answer(front, req, res));
  const addr = await listen(server, opts);
  const hostPart = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const origin = opts.publicUrl ?? `http://${hostPart}:${addr.port}`;
  front.names = ownNames(addr, opts.publicUrl);
  const holder = createHolder(host, store, {
    approvalTimeoutMs: opts.approvalTimeoutMs,
    reviewUrl: `${origin}/review`,
    ...(opts.pollMs !== undefined ? { pollMs: opts.pollMs } : {}),
    ...(front.log ? { logger: front.log } : {}),
  });
  front.holder = holder;
  front.log?.info({ event: 'serve.http.listening', url: origin }, 'serving HTTP');
  let closing: Promise<void> | undefined;
  return {
    url: `http://${hostPart}:${addr.port}`,
    port: addr.port,
    holder,
    close() {
      closing ??= closeServer(front, server, opts.closeGraceMs ?? 30_000);
      return closing;
    },
  };
}

/** What the server's requests share. Wrong tokens are counted in the store, review sessions live there: both hold across replicas. */
async function frontOf(host: ToolHost, store: Store, opts: HttpServerOptions): Promise<Front> {
  const sdk = await mcpSdk();
  const front: Front = {
    host,
    store,
    opts,
    log: opts.logger,
    // one throttle for the API, /mcp and sign-ins of every replica over the store
    throttle: new Throttle(THROTTLE_LIMITS, store),
    reviewSessions: new ReviewSessions(store, opts.reviewSessions),
    sdk,
    sessions: new McpSessions(sdk, {
      host,
      call: { tierSource: 'serve.cliTier', ...opts.mcp },
      ...(opts.version ? { version: opts.version } : {}),
      max: opts.maxMcpSessions ?? 64,
      idleMs: opts.mcpIdleMs ?? Math.max(30 * 60_000, opts.approvalTimeoutMs + 10 * 60_000),
      progressEvery: opts.progressIntervalMs ?? 5_000,
      holder: () => front.holder!,
    }),
  };
  return front;
}

/** Listens on the configured address (default 127.0.0.1:8787); a failure to bind rejects. */
async function listen(server: Server, opts: Pick<HttpServerOptions, 'host' | 'port'>): Promise<AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 8787, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server.address() as AddressInfo;
}

/**
 * One request: routed, then one log line. A failure is answered in the door's form (the
 * reviewer page's browser gets a page) after its body is drained, or the connection is cut.
 * The client going away before its answer cancels what it waits for.
 */
function answer(front: Front, req: IncomingMessage, res: ServerResponse): void {
  const started = performance.now();
  const line: Record<string, unknown> = {
    event: 'serve.request',
    method: req.method,
    path: redactLogText((req.url ?? '').split('?')[0]!).slice(0, 128),
  };
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  route(front, req, res, line, gone.signal).then(
    () => {
      front.log?.info(
        { ...line, status: res.statusCode, durationMs: Math.round(performance.now() - started) },
        'serve request',
      );
    },
    (e: unknown) => {
      const { status, error } = wireError(e);
      const settle = status === 413 ? Promise.resolve(false) : drain(req);
      void settle.then((drained) => {
        if (reviewErrorPage(req)) sendReviewError(res, status, error);
        else sendJson(res, status, { ok: false, error }, errorHeaders(error));
        if (!drained) res.once('finish', () => req.socket.destroy());
      });
      logRefused(front.log, 'serve', { ...line, status, code: error.code }, started, e);
    },
  );
}

/**
 * Where a request goes: every route first checks the request names this server; /healthz and
 * /openapi.json need no token; /mcp, /review and the API read the tokens now.
 */
async function route(
  front: Front,
  req: IncomingMessage,
  res: ServerResponse,
  line: Record<string, unknown>,
  signal: AbortSignal,
): Promise<void> {
  const { host, store, opts } = front;
  const url = new URL(req.url ?? '/', 'http://server');
  const path = url.pathname;
  if (!(req.url ?? '').startsWith('/')) throw new ServeRefusal(400, 'the request target must be a path');
  const refused = foreign(front.names!, opts.publicUrl, req);
  if (refused && path === '/mcp') {
    line['code'] = refused.code;
    await drain(req);
    return rpcError(
      res,
      wireError(refused).status,
      refused instanceof ServeRefusal ? -32000 : -32001,
      refused,
    );
  }
  if (refused) throw refused;
  if (path === '/healthz' && req.method === 'GET') return health(host, store, res, line);
  if (path === '/openapi.json' && req.method === 'GET') return sendJson(res, 200, OPENAPI);
  const tokens: ServeTokens = await readSecretOrRefuse(
    () => opts.tokens(),
    front.log,
    'serve.token_unavailable',
    'a serve token cannot be read',
  );
  if (path === '/mcp') return mcpDoor(front, req, res, tokens, line);
  if (path === '/review' || path.startsWith('/review/'))
    return review(req, res, url, {
      host,
      store,
      holder: front.holder!,
      tokens,
      throttle: front.throttle,
      sessions: front.reviewSessions,
      line,
      ...(opts.publicUrl ? { publicUrl: opts.publicUrl } : {}),
      approvalTimeoutMs: opts.approvalTimeoutMs,
    });
  const who = async (allowed: readonly Role[]) => {
    const c = await authorize(req, tokens, allowed, front.throttle, line);
    line['role'] = c.role;
    return c;
  };
  const r = await api(
    req,
    url,
    { host, store, holder: front.holder!, who, line, executorMaxTier: opts.executorMaxTier ?? 'write' },
    signal,
  );
  if (!r)
    throw new ServeRefusal(
      404,
      `no route ${redactLogText(req.method ?? '')} ${redactLogText(path).slice(0, 100)}`,
    );
  sendJson(res, 200, { ok: true, result: r.result });
}

/**
 * 200 when this replica can serve calls: its store answers now. Else 503 with the store's
 * code (STORE_UNAVAILABLE), so a load balancer stops sending it calls until it can.
 */
async function health(
  host: ToolHost,
  store: Store,
  res: ServerResponse,
  line: Record<string, unknown>,
): Promise<void> {
  try {
    // a store that answers reads but refuses writes (a full disk) starts no call either
    await host.checkStore?.();
    await store.ping(HEALTH_PING_MS);
  } catch (e) {
    const { error } = wireError(e);
    line['code'] = error.code;
    return sendJson(res, 503, { ok: false, error }, errorHeaders(error));
  }
  sendJson(res, 200, { ok: true, result: { status: 'ok', store: 'ok' } });
}

/**
 * The request names another server (a foreign Host: 421, SERVE_PROTOCOL_ERROR), or comes
 * from a page of another origin (SERVE_FORBIDDEN); undefined when it is this server's own.
 */
export function foreign(
  names: OwnNames,
  publicUrl: string | undefined,
  req: Pick<IncomingMessage, 'headers'>,
): ServeRefusal | BrokerError | undefined {
  const shown = (v: string) => redactLogText(v).slice(0, 100);
  const host = req.headers.host;
  if (!names.host(host))
    return new ServeRefusal(
      421,
      host === undefined
        ? 'the request has no Host header; it must name this server'
        : `the Host header ${JSON.stringify(shown(host))} does not name this server: send the address it listens on${publicUrl ? ` or ${new URL(publicUrl).host}` : ''} (behind a proxy, set serve.publicUrl to the name it is reached at)`,
      host === undefined ? undefined : { host: shown(host) },
    );
  const from = req.headers.origin;
  if (from !== undefined && !names.origin(from))
    return brokerError('SERVE_FORBIDDEN', { origin: true }, { details: { origin: shown(from) } });
  return undefined;
}

/**
 * Stop: the calls that waited answer SERVE_STOPPED, running ones finish (up to the grace,
 * after which their connections are cut); then the MCP sessions end and the server closes.
 */
async function closeServer(front: Front, server: Server, graceMs: number): Promise<void> {
  front.holder!.stop();
  front.sessions.stopSweep();
  const stopped = new Promise<void>((r) => server.close(() => r()));
  const cut = setTimeout(() => server.closeAllConnections(), graceMs);
  cut.unref();
  let graceTimer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((r) => {
    graceTimer = setTimeout(r, graceMs);
  });
  await Promise.race([front.sessions.settled(), grace]);
  clearTimeout(graceTimer);
  await front.sessions.close();
  server.closeIdleConnections();
  await stopped;
  clearTimeout(cut);
}
