/**
 * `createBroker`: one listener on 127.0.0.1 serving many sessions. The outer HTTP server
 * speaks the proxy protocol (CONNECT, 407, refusal of plain HTTP); the decrypted tunnel
 * streams are read by our own strict parser (inner.ts), not by node's HTTP server, which
 * hands each request to the pipeline (pipeline.ts). This is where the corridor is joined:
 * tunnel → reader → pipeline, none of them importing the one before it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Auditor } from '../audit/emit.js';
import { brokerLog } from '../audit/logger.js';
import { redactPath } from '../audit/redact.js';
import { BrokerError, brokerError } from '../errors.js';
import { type CertificateAuthority, createCertificateAuthority, loadCertificateAuthority } from './ca.js';
import type { BrokerEnv } from './env.js';
import { serveTunnel } from './inner.js';
import { auditRefusal, sessionClosed } from './exchange.js';
import { LeafCache } from './leaf-cache.js';
import { checkBrokerOptions } from './options.js';
import { handleRequest } from './pipeline.js';
import { sendRefusal, writeRawRefusal } from './refusal.js';
import { SESSION_KEY, Session } from './session.js';
import { authenticate, handleConnect, refuseProxyAuth } from './tunnel.js';
import { type BrokerOptions, DEFAULT_LIMITS, type Limits, type SessionOptions } from './types.js';
import { UpstreamPool } from './pool.js';
import { createUpstream, type Dispatcher } from './upstream.js';

/** A running broker: one loopback listener that hands out a session per call. From `createBroker`. */
export interface Broker {
  /** the port the proxy listens on (127.0.0.1) */
  readonly port: number;
  /** `http://127.0.0.1:<port>` (without session credentials) */
  readonly url: string;
  /** PEM of the broker's CA */
  readonly caCertPem: string;
  /**
   * The broker's own upstream routing (its `upstream.resolve` and CA), for the host's own
   * requests that must reach vendors the same way (the runner mints tokens through it): an
   * undici dispatcher, started the first time this is read. It holds no credential; do not
   * close it: `close()` does.
   */
  readonly dispatcher: Dispatcher;
  /**
   * Opens a session: its proxyUrl carries the credentials a child must present.
   * @throws BrokerError SESSION_OPTIONS_INVALID (details.path names the option), CLI_SESSION_CLOSED
   */
  openSession(opts: SessionOptions): Session;
  /** Ends every session, socket, timer and upstream connection. */
  close(): Promise<void>;
}

/**
 * Starts a broker listening on 127.0.0.1.
 *
 * @throws BrokerError BROKER_OPTIONS_INVALID (details.path names the option) before anything starts
 */
export async function createBroker(opts: BrokerOptions = {}): Promise<Broker> {
  checkBrokerOptions(opts);
  const ca: CertificateAuthority = opts.ca
    ? loadCertificateAuthority(opts.ca.certPem, opts.ca.keyPem)
    : createCertificateAuthority();
  const limits: Limits = { ...DEFAULT_LIMITS, ...opts.limits };
  const env: BrokerEnv = {
    upstream: new UpstreamPool(opts.upstream),
    leaves: new LeafCache(ca),
    auditor: new Auditor(opts.logger, opts.onAudit),
    log: brokerLog(opts.logger),
    onTunnel: opts.onTunnel,
  };
  // undici, for the host's own requests only: loaded and started on first use
  let dispatcher: Dispatcher | undefined;
  const sessions = new Map<string, Session>();
  const sockets = new Set<Duplex>();
  const track = (s: Duplex): void => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };

  // The CONNECT head gets the same time as a request head inside a tunnel.
  const outer = createServer({
    requireHostHeader: false,
    maxHeaderSize: limits.maxHeaderBytes,
    headersTimeout: limits.requestHeadTimeoutMs,
    requestTimeout: Math.max(60_000, limits.requestHeadTimeoutMs),
    connectionsCheckingInterval: headCheckInterval(limits),
  });
  outer.on('connection', track);
  outer.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) =>
    handleConnect(env, sessions, req, socket, head, (tls) => {
      track(tls);
      // the tunnel's own reader: its session's limits (a session may shorten the head timeout)
      const tunnel = tls.tunnel;
      serveTunnel(env, tunnel.session.limits, tls, (r, res) => handleRequest(env, tunnel, r, res));
    }),
  );
  // Every request on the listener is refused, those with an `Expect` too: node would ask for
  // the body (100) or answer 417 itself, unaudited and uncounted.
  const onPlainRequest = (req: IncomingMessage, res: ServerResponse): void => {
    // Absolute-form (GET http://…) is plain-HTTP proxying; anything else is not a proxy request.
    const session = authenticate(req.headers['proxy-authorization'], sessions);
    req.resume();
    if (!session) {
      refuseProxyAuth(res.socket!);
      return;
    }
    const url = req.url ?? '';
    const plain = /^http:\/\/([^/?#]*)/i.exec(url);
    const method = (req.method ?? '-').slice(0, 16);
    const err = plain
      ? brokerError('CLI_PLAIN_HTTP_REFUSED', { method, path: redactPath(url.slice(plain[0].length)) })
      : brokerError('CLI_BAD_REQUEST', { problem: 'not-connect' });
    // An authenticated session's plain-HTTP request is a request like any other: audited and counted.
    const host = plain ? plain[1]!.replace(/^.*@/, '').toLowerCase().slice(0, 255) : '-';
    auditRefusal(
      env,
      session,
      host,
      method,
      plain ? url.slice(plain[0].length) || '/' : '-',
      err,
      sendRefusal(res, err, 'broker', true),
    );
  };
  outer.on('request', onPlainRequest);
  outer.on('checkContinue', onPlainRequest);
  outer.on('checkExpectation', onPlainRequest);
  outer.on('clientError', (err: Error & { code?: string }, socket: Duplex) => rawParseError(err, socket));

  await new Promise<void>((resolve, reject) => {
    outer.once('error', reject);
    outer.listen(opts.port ?? 0, '127.0.0.1', () => {
      outer.off('error', reject);
      resolve();
    });
  });
  const port = (outer.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;

  return {
    port,
    url: `http://127.0.0.1:${port}`,
    caCertPem: ca.certPem,
    get dispatcher() {
      dispatcher ??= createUpstream(opts.upstream);
      return dispatcher;
    },
    openSession(sessionOpts) {
      if (closing) throw brokerError('CLI_SESSION_CLOSED', { problem: 'broker-closing' });
      const session = new Session(SESSION_KEY, sessionOpts, {
        port,
        caCertPem: ca.certPem,
        brokerLimits: limits,
        leaves: env.leaves,
        onClose: (s) => {
          sessions.delete(s.id);
          sessionClosed(env, s);
        },
      });
      sessions.set(session.id, session);
      return session;
    },
    close() {
      closing ??= (async () => {
        for (const s of [...sessions.values()]) s.close();
        const closed = new Promise<void>((resolve) => outer.close(() => resolve()));
        for (const s of sockets) s.destroy();
        await closed;
        await Promise.all([env.upstream.destroy(), dispatcher?.destroy()]);
      })();
      return closing;
    },
  };
}

/** How often node checks head timeouts: a quarter of the timeout, at most 1 s late. */
function headCheckInterval(limits: Limits): number {
  return Math.min(1000, Math.max(25, Math.floor(limits.requestHeadTimeoutMs / 4)));
}

/** The refusal for a head the parser rejected; undefined when the child just went away. */
function parseRefusal(err: Error & { code?: string }, socket: Duplex): BrokerError | undefined {
  // node times a fresh connection from its start: one that never sent a byte is an idle
  // tunnel (gh opens a spare one), closed quietly like an idle keep-alive connection.
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && (socket as Duplex & { bytesRead?: number }).bytesRead === 0)
    return undefined;
  // The child went away (a reset, or end of stream inside a head or body): nothing to answer.
  // A request whose body was cut is audited by the pipeline as the child's doing.
  if (err.code === 'ECONNRESET' || err.code === 'HPE_INVALID_EOF_STATE') return undefined;
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new BrokerError('CLI_REQUEST_HEAD_TIMEOUT');
  }
  const code = err.code === 'HPE_HEADER_OVERFLOW' ? 'CLI_HEADERS_TOO_LARGE' : 'CLI_BAD_REQUEST';
  return brokerError(code, { parseError: err.code ?? 'parse error' });
}

function rawParseError(err: Error & { code?: string }, socket: Duplex): void {
  const refusal = parseRefusal(err, socket);
  if (refusal && socket.writable) writeRawRefusal(socket, refusal);
  else socket.destroy();
}

export type { Session };
