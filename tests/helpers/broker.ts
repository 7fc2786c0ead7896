/**
 * Fixture factories shared by the engine tests: a broker wired to a recording upstream,
 * and a raw tunnel client for what curl cannot send (hostile heads, pipelining, bad SNI).
 */
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { type Broker, createBroker } from '../../src/broker/broker.js';
import type { Session } from '../../src/broker/session.js';
import type { AuditEvent, BrokerOptions, SessionOptions } from '../../src/broker/types.js';
import { type LeakGuard, leakGuard, proxySecret } from './leaks.js';
import { startUpstream, type Upstream } from './upstream.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface Fixture {
  broker: Broker;
  upstream: Upstream;
  events: AuditEvent[];
  /** the leak guard behind the logger and the audit sink (its captured log text included) */
  guard: LeakGuard;
  session(opts?: Partial<SessionOptions>): Session;
}

export async function brokerFixture(
  t: Teardown,
  opts: { hosts?: string[]; broker?: Partial<BrokerOptions>; secrets?: string[] } = {},
): Promise<Fixture> {
  const hosts = opts.hosts ?? ['api.example.com'];
  const upstream = await startUpstream(hosts);
  const events: AuditEvent[] = [];
  const guard = leakGuard(opts.secrets ?? []);
  const broker = await createBroker({
    upstream: { ca: upstream.pki.caPem, resolve: upstream.resolve, allowAddresses: ['127.0.0.0/8'] },
    logger: guard.logger,
    onAudit: (e) => {
      events.push(e);
      guard.onAudit(e);
    },
    ...opts.broker,
  });
  t.teardown(async () => {
    await broker.close();
    await upstream.close();
    guard.assertClean();
  });
  return {
    broker,
    upstream,
    events,
    guard,
    session: (o = {}) => {
      const s = broker.openSession({ egress: hosts, ...o });
      guard.watch(proxySecret(s.proxyUrl));
      return s;
    },
  };
}

function proxyAuth(proxyUrl: string): string {
  const u = new URL(proxyUrl);
  return `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
}

/** Sends a raw CONNECT and returns the proxy's answer head plus the socket. */
export function rawConnect(
  port: number,
  head: string,
): Promise<{ head: string; socket: import('node:net').Socket; rest: Buffer }> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    const onData = (c: Buffer): void => {
      buf = Buffer.concat([buf, c]);
      const end = buf.indexOf('\r\n\r\n');
      if (end !== -1) {
        socket.off('data', onData);
        socket.off('end', onEnd);
        resolve({ head: buf.subarray(0, end).toString('latin1'), socket, rest: buf.subarray(end + 4) });
      }
    };
    const onEnd = (): void => resolve({ head: buf.toString('latin1'), socket, rest: Buffer.alloc(0) });
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('error', reject);
    socket.write(head);
  });
}

/** A TLS tunnel through the broker, as a client that speaks raw HTTP/1.1 inside it. */
export async function openTunnel(
  session: Session,
  port: number,
  host: string,
  opts: { servername?: string; alpn?: string[] } = {},
): Promise<TLSSocket> {
  const { head, socket } = await rawConnect(
    port,
    `CONNECT ${host}:443 HTTP/1.1\r\nHost: ${host}:443\r\nProxy-Authorization: ${proxyAuth(session.proxyUrl)}\r\n\r\n`,
  );
  if (!head.startsWith('HTTP/1.1 200')) throw new Error(`CONNECT refused: ${head.split('\r\n')[0]}`);
  return new Promise((resolve, reject) => {
    const tls = tlsConnect(
      {
        socket,
        servername: opts.servername ?? host,
        ca: session.caCertPem,
        ALPNProtocols: opts.alpn ?? ['http/1.1'],
      },
      () => resolve(tls),
    );
    tls.once('error', reject);
  });
}

/** Writes raw bytes into a tunnel and collects everything until the server closes or `until` matches. */
export function exchange(
  tls: TLSSocket,
  raw: string | Buffer,
  until?: (s: string) => boolean,
  timeoutMs = 5000,
): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    const done = (): void => {
      clearTimeout(timer);
      tls.off('data', onData);
      resolve(out);
    };
    const timer = setTimeout(done, timeoutMs);
    const onData = (c: Buffer): void => {
      out += c.toString('latin1');
      if (until?.(out)) done();
    };
    tls.on('data', onData);
    tls.once('end', done);
    tls.once('close', done);
    tls.write(raw);
  });
}

export { proxyAuth };

/** Polls until `fn()` is truthy (or the timeout passes): no fixed sleeps, which flake under load. */
export async function until(fn: () => unknown, timeoutMs = 5000): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (fn()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return Boolean(fn());
}

/**
 * A broker whose every upstream connection goes to `server`, a scripted vendor the test
 * wrote (one that answers early, or writes raw bytes), listened on here on the loopback
 * interface; both are closed at teardown. `caPem` is the CA the vendor's leaf comes from.
 */
export async function brokerToVendor(
  t: Teardown,
  server: import('node:net').Server & { closeAllConnections?: () => void },
  caPem: string,
): Promise<{ broker: Broker; events: AuditEvent[] }> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    server.closeAllConnections?.();
    server.close();
  });
  const port = (server.address() as import('node:net').AddressInfo).port;
  const events: AuditEvent[] = [];
  const broker = await createBroker({
    upstream: { ca: caPem, resolve: () => ({ host: '127.0.0.1', port }), allowAddresses: ['127.0.0.0/8'] },
    onAudit: (e) => events.push(e),
  });
  t.teardown(() => broker.close());
  return { broker, events };
}
