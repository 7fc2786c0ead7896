/**
 * CONNECT handling and TLS termination: authenticate the session (407 and nothing else
 * without it), check the target, answer 200, terminate TLS with a leaf for the host (ALPN
 * http/1.1 only) and hand the decrypted stream, carrying its tunnel, to whoever asked
 * (broker.ts gives it to the tunnel's request reader, inner.ts).
 */
import type { IncomingMessage } from 'node:http';
import { isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { redactLogText } from '../audit/logger.js';
import { redactHost } from '../audit/redact.js';
import { BrokerError, brokerError, policyError } from '../errors.js';
import { type BrokerEnv, type Tunnel, TunnelSocket } from './env.js';
import { auditRefusal } from './exchange.js';
import { writeRawRefusal } from './refusal.js';
import { isDnsName, type Session } from './session.js';

/** `Proxy-Authorization: Basic base64(user:pass)` → the session it names, if the secret matches. */
export function authenticate(
  header: string | undefined,
  sessions: ReadonlyMap<string, Session>,
): Session | undefined {
  if (!header) return undefined;
  const m = /^\s*basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return undefined;
  const session = sessions.get(decoded.slice(0, colon));
  // The secret is checked even for a closed session, so timing does not tell ids apart.
  if (!session?.verifySecret(decoded.slice(colon + 1)) || session.closed) return undefined;
  return session;
}

export function refuseProxyAuth(socket: Duplex): void {
  writeRawRefusal(socket, new BrokerError('CLI_PROXY_AUTH_REQUIRED'), {
    'proxy-authenticate': 'Basic realm="clibroker"',
  });
}

/** `host:port` from a CONNECT request target; undefined when malformed. */
export function parseAuthority(target: string): { host: string; port: number } | undefined {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]/\s@]+):(\d{1,5})$/.exec(target);
  if (!m) return undefined;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host: m[1]!.toLowerCase(), port };
}

export function handleConnect(
  env: BrokerEnv,
  sessions: ReadonlyMap<string, Session>,
  req: IncomingMessage,
  socket: Socket,
  head: Buffer,
  onTls: (tls: TunnelSocket) => void,
): void {
  socket.on('error', () => socket.destroy());
  const session = authenticate(req.headers['proxy-authorization'], sessions);
  if (!session) {
    // No session to audit against; the target is logged (the log redacts userinfo such as id:secret@).
    env.log?.warn({ target: req.url ?? '' }, 'clibroker: CONNECT without valid session credentials (407)');
    refuseProxyAuth(socket);
    return;
  }
  const refuse = (err: BrokerError, host: string): void => {
    auditRefusal(
      env,
      session,
      host,
      'CONNECT',
      '',
      err,
      writeRawRefusal(socket, err, {}, session.limits.requestHeadTimeoutMs),
    );
  };
  const target = parseAuthority(req.url ?? '');
  // A malformed target is echoed (to the child and the audit event) only redacted and capped.
  const shownHost = target ? target.host.slice(0, 255) : redactLogText(req.url ?? '').slice(0, 255);
  // A session past its budget (a request was refused for it) opens no new tunnel: each
  // would carry one more refusal and nothing else.
  if (session.stats.requests > session.limits.maxRequests) {
    const max = session.limits.maxRequests;
    refuse(
      brokerError('CLI_REQUEST_BUDGET_EXCEEDED', { max, request: session.stats.requests + 1 }),
      shownHost,
    );
    return;
  }
  if (!target || isIP(target.host.replace(/^\[|\]$/g, '')) !== 0 || !isDnsName(target.host)) {
    refuse(brokerError('CLI_HOST_INVALID', { target: shownHost }), shownHost);
    return;
  }
  if (target.port !== 443) {
    refuse(brokerError('CLI_PORT_REFUSED', { host: target.host, port: target.port }), target.host);
    return;
  }
  const host = target.host;
  if (session.leaves && !session.allowsHost(host)) {
    // A name-constrained CA cannot mint for this host: refuse at CONNECT instead of in-band.
    refuse(policyError('CLI_EGRESS_HOST_DENIED', { host }), host);
    return;
  }
  if (session.openTunnels >= session.limits.maxTunnels) {
    refuse(brokerError('CLI_TUNNEL_LIMIT_EXCEEDED', { max: session.limits.maxTunnels, host }), host);
    return;
  }
  if (!session.adopt(socket)) {
    refuseProxyAuth(socket);
    return;
  }
  socket.setNoDelay(true);
  socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
  if (head.length > 0) socket.unshift(head);
  const tunnel: Tunnel = { session, host, requests: 0, onClose: new Set() };
  let http2Only = false;
  let secure = false;
  let tlsError: string | undefined;
  const tls = new TunnelSocket(
    socket,
    {
      isServer: true,
      secureContext: (session.leaves ?? env.leaves).forHost(host, session.leafSet),
      // ALPN http/1.1 only: gh and curl offer h2 first and fall back; a client offering only h2
      // gets a no_application_protocol alert (undefined here), and the refusal is recorded.
      ALPNCallback: ({ protocols }) => {
        if (protocols.includes('http/1.1')) return 'http/1.1';
        http2Only = true;
        return undefined;
      },
    },
    tunnel,
  );
  tls.once('close', () => {
    tunnel.closed = true;
    try {
      env.onTunnel?.({
        session: session.id,
        ...(session.labels ? { labels: session.labels } : {}),
        // as in the audit event: the child chose the name, and it may carry a token
        host: redactHost(host),
        tls: secure ? 'established' : 'failed',
        ...(tlsError ? { error: tlsError } : {}),
        requests: tunnel.requests,
      });
    } catch (err) {
      env.log?.error({ err }, 'clibroker: onTunnel threw');
    }
    for (const cut of tunnel.onClose) cut();
  });
  // A CONNECT that never finishes TLS would hold its socket until the session ends.
  const handshake = setTimeout(() => {
    auditRefusal(
      env,
      session,
      host,
      'CONNECT',
      '',
      brokerError('CLI_TLS_HANDSHAKE_TIMEOUT', { host, ms: session.limits.tlsHandshakeTimeoutMs }),
      undefined,
    );
    tls.destroy();
    socket.destroy();
  }, session.limits.tlsHandshakeTimeoutMs);
  handshake.unref();
  socket.once('close', () => clearTimeout(handshake));
  tls.on('error', (err) => {
    if (!secure) tlsError ??= redactLogText(String(err?.message ?? err)).slice(0, 200);
    if (http2Only) {
      http2Only = false;
      clearTimeout(handshake);
      auditRefusal(env, session, host, 'CONNECT', '', brokerError('CLI_HTTP2_ONLY', { host }), undefined);
    } else {
      env.log?.debug({ err, host }, 'clibroker: tunnel TLS error');
    }
    tls.destroy();
    socket.destroy();
  });
  tls.once('secure', () => {
    secure = true;
    clearTimeout(handshake);
    const sni = (tls as TLSSocket & { servername?: string | false }).servername;
    if (typeof sni === 'string' && sni.toLowerCase() !== host) tunnel.sniMismatch = sni.slice(0, 255);
    onTls(tls);
  });
}
