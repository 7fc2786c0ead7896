/**
 * `createBroker`: one listener on 127.0.0.1 serving many sessions. The outer HTTP server
 * speaks the proxy protocol (CONNECT, 407, refusal of plain HTTP); the inner one — never
 * listening — parses the decrypted tunnel streams with node's llhttp.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Auditor } from '../audit/emit.js';
import { redactPath } from '../audit/redact.js';
import { BrokerError } from '../errors.js';
import { type CertificateAuthority, createCertificateAuthority, loadCertificateAuthority } from './ca.js';
import { auditBlocked, type BrokerEnv, type Tunnel } from './env.js';
import { LeafCache } from './leaf-cache.js';
import { handleRequest } from './pipeline.js';
import { sendRefusal, writeRawRefusal } from './refusal.js';
import { Session } from './session.js';
import { authenticate, handleConnect, refuseProxyAuth, tunnels } from './tunnel.js';
import { type BrokerOptions, DEFAULT_LIMITS, type Limits, type SessionOptions } from './types.js';
import { createUpstream, type Dispatcher } from './upstream.js';

export interface Broker {
  /** the port the proxy listens on (127.0.0.1) */
  readonly port: number;
  /** `http://127.0.0.1:<port>` (without session credentials) */
  readonly url: string;
  /** PEM of the broker's CA */
  readonly caCertPem: string;
  /**
   * The broker's own upstream routing (its `upstream.resolve` and CA), for the host's own
   * requests that must reach vendors the same way (the runner mints tokens through it). It
   * holds no credential; do not close it: `close()` does.
   */
  readonly dispatcher: Dispatcher;
  /** Opens a session: its proxyUrl carries the credentials a child must present. */
  openSession(opts: SessionOptions): Session;
  /** Ends every session, socket, timer and upstream connection. */
  close(): Promise<void>;
}

/** Starts a broker listening on 127.0.0.1. */
export async function createBroker(opts: BrokerOptions = {}): Promise<Broker> {
  const ca: CertificateAuthority = opts.ca ? loadCertificateAuthority(opts.ca.certPem, opts.ca.keyPem) : createCertificateAuthority();
  const limits: Limits = { ...DEFAULT_LIMITS, ...opts.limits };
  const env: BrokerEnv = {
    upstream: createUpstream(opts.upstream),
    leaves: new LeafCache(ca),
    auditor: new Auditor(opts.logger, opts.onAudit),
    logger: opts.logger,
  };
  const sessions = new Map<string, Session>();
  const sockets = new Set<Duplex>();
  const track = (s: Duplex): void => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };

  const inner = createInnerServer(env, limits);
  const outer = createServer({ requireHostHeader: false, maxHeaderSize: limits.maxHeaderBytes, headersTimeout: 30_000, requestTimeout: 60_000 });
  outer.on('connection', track);
  outer.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) =>
    handleConnect(env, sessions, req, socket, head, (tls) => {
      track(tls);
      inner.emit('connection', tls);
    }),
  );
  outer.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // Absolute-form (GET http://…) is plain-HTTP proxying; anything else is not a proxy request.
    if (!authenticate(req.headers['proxy-authorization'], sessions)) {
      req.resume();
      return refuseProxyAuth(res.socket!);
    }
    const plain = /^http:\/\//i.test(req.url ?? '');
    sendRefusal(
      res,
      plain
        ? new BrokerError('CLI_PLAIN_HTTP_REFUSED', { message: `CLI_PLAIN_HTTP_REFUSED: plain-HTTP proxying (${(req.method ?? '').slice(0, 16)} ${redactPath((req.url ?? '').replace(/^http:\/\/[^/]*/i, ''))}) is refused; use https://.` })
        : new BrokerError('CLI_BAD_REQUEST', { message: 'CLI_BAD_REQUEST: this is a proxy; send CONNECT host:443.' }),
      {},
      true,
    );
    req.resume();
  });
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
    dispatcher: env.upstream,
    openSession(sessionOpts) {
      if (closing) throw new BrokerError('CLI_SESSION_CLOSED', { message: 'CLI_SESSION_CLOSED: the broker is closing.' });
      const session = new Session(sessionOpts, { port, caCertPem: ca.certPem, brokerLimits: limits, onClose: (s) => sessions.delete(s.id) });
      sessions.set(session.id, session);
      return session;
    },
    close() {
      closing ??= (async () => {
        for (const s of [...sessions.values()]) s.close();
        const closed = new Promise<void>((resolve) => outer.close(() => resolve()));
        for (const s of sockets) s.destroy();
        inner.closeAllConnections();
        await closed;
        await env.upstream.destroy();
      })();
      return closing;
    },
  };
}

function createInnerServer(env: BrokerEnv, limits: Limits): Server {
  const inner = createServer({
    maxHeaderSize: limits.maxHeaderBytes,
    // Host is checked against the CONNECT host by the pipeline, with a coded refusal.
    requireHostHeader: false,
    // Tunnels belong to one session and end with it; idle keep-alive can be generous.
    keepAliveTimeout: 60_000,
    headersTimeout: 60_000,
    requestTimeout: 0,
  });
  const onRequest = (expectContinue: boolean) => (req: IncomingMessage, res: ServerResponse) => {
    const tunnel = tunnels.get(req.socket);
    if (!tunnel) return req.socket.destroy();
    void handleRequest(env, tunnel, req, res, expectContinue);
  };
  inner.on('request', onRequest(false));
  inner.on('checkContinue', onRequest(true));
  inner.on('upgrade', (req: IncomingMessage, socket: Duplex) => refuseUpgrade(env, tunnels.get(socket), req, socket));
  inner.on('connect', (req: IncomingMessage, socket: Duplex) => {
    const status = writeRawRefusal(socket, new BrokerError('CLI_TUNNEL_CONNECT_REFUSED', { message: 'CLI_TUNNEL_CONNECT_REFUSED: CONNECT inside an intercepted tunnel is refused.' }));
    const tunnel = tunnels.get(socket);
    if (tunnel) auditRaw(env, tunnel, 'CONNECT', req.url ?? '-', status, 'CLI_TUNNEL_CONNECT_REFUSED', 'CONNECT inside the tunnel');
  });
  inner.on('clientError', (err: Error & { code?: string }, socket: Duplex) => {
    const tunnel = tunnels.get(socket);
    const status = rawParseError(err, socket);
    if (tunnel && status) auditRaw(env, tunnel, '-', '-', status, err.code === 'HPE_HEADER_OVERFLOW' ? 'CLI_HEADERS_TOO_LARGE' : 'CLI_BAD_REQUEST', `unparseable request: ${err.code ?? err.message}`);
  });
  return inner;
}

function rawParseError(err: Error & { code?: string }, socket: Duplex): number | undefined {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return undefined;
  }
  const code = err.code === 'HPE_HEADER_OVERFLOW' ? 'CLI_HEADERS_TOO_LARGE' : 'CLI_BAD_REQUEST';
  return writeRawRefusal(socket, new BrokerError(code, { message: `${code}: the request could not be parsed as HTTP/1.1 (${err.code ?? 'parse error'}); it was not sent.` }));
}

function refuseUpgrade(env: BrokerEnv, tunnel: Tunnel | undefined, req: IncomingMessage, socket: Duplex): void {
  const upgrade = String(req.headers.upgrade ?? '').slice(0, 64);
  const status = writeRawRefusal(
    socket,
    new BrokerError('CLI_UPGRADE_REFUSED', { message: `CLI_UPGRADE_REFUSED: the request asks to upgrade the connection to ${JSON.stringify(upgrade)}; clibroker cannot govern upgraded connections, so it was not sent.` }),
  );
  if (tunnel) auditRaw(env, tunnel, req.method ?? '-', req.url ?? '/', status, 'CLI_UPGRADE_REFUSED', `upgrade to ${upgrade} refused`);
}

function auditRaw(env: BrokerEnv, tunnel: Tunnel, method: string, target: string, status: number, code: string, reason: string): void {
  auditBlocked(env, tunnel.session, tunnel.host, { method, path: target === '-' ? '-' : redactPath(target), status, code, reason });
}

export type { Session };
