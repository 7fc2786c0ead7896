/**
 * The load generator's connections. Every path uses the same undici client; only how a
 * socket is made differs: straight TLS to the upstream, or CONNECT through a proxy and TLS
 * inside the tunnel (what gh, az and curl do behind HTTPS_PROXY).
 */
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { type buildConnector, Client, Pool } from 'undici';

export interface Route {
  /** where the TLS (direct) or CONNECT (proxied) connection goes */
  port: number;
  /** PEM the client trusts: the upstream's CA, or the intercepting proxy's */
  caPem: string;
  /** set for proxies: send CONNECT host:443 first */
  proxy: boolean;
  /** Proxy-Authorization value */
  auth?: string;
}

/** Opens one TLS connection to `host` along `route`. */
export function openTls(route: Route, host: string): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const handshake = (socket?: import('node:net').Socket): void => {
      const tls = tlsConnect({
        ...(socket ? { socket } : { host: '127.0.0.1', port: route.port }),
        servername: host,
        ca: route.caPem,
        ALPNProtocols: ['http/1.1'],
      });
      tls.setNoDelay(true);
      tls.once('secureConnect', () => {
        tls.off('error', reject);
        resolve(tls);
      });
      tls.once('error', reject);
    };
    if (!route.proxy) return handshake();
    const raw = netConnect(route.port, '127.0.0.1');
    raw.setNoDelay(true);
    raw.once('error', reject);
    raw.once('connect', () =>
      raw.write(
        `CONNECT ${host}:443 HTTP/1.1\r\nHost: ${host}:443\r\n${route.auth ? `Proxy-Authorization: ${route.auth}\r\n` : ''}\r\n`,
      ),
    );
    let head = '';
    const onData = (c: Buffer): void => {
      head += c.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      raw.off('data', onData);
      raw.off('error', reject);
      if (!/^HTTP\/1\.[01] 200/.test(head)) {
        raw.destroy();
        reject(new Error(`CONNECT ${host} refused: ${head.split('\r\n')[0]}`));
        return;
      }
      handshake(raw);
    };
    raw.on('data', onData);
  });
}

function connector(route: Route): buildConnector.connector {
  return (opts, cb) => {
    openTls(route, opts.hostname).then(
      (s) => cb(null, s),
      (e: Error) => cb(e, null),
    );
  };
}

const CLIENT_OPTS = {
  pipelining: 1,
  keepAliveTimeout: 120_000,
  keepAliveMaxTimeout: 120_000,
  headersTimeout: 30_000,
  bodyTimeout: 30_000,
};

/** A keep-alive pool of `connections` to `https://<host>` along `route`. */
export function pool(route: Route, host: string, connections: number): Pool {
  return new Pool(`https://${host}`, { ...CLIENT_OPTS, connections, connect: connector(route) });
}

/** A single connection (S1, S4). */
export function client(route: Route, host: string): Client {
  return new Client(`https://${host}`, { ...CLIENT_OPTS, connect: connector(route) });
}

/** One GET, body read to the end; throws on a non-200. */
export async function get(d: Pool | Client, path = '/'): Promise<void> {
  const res = await d.request({ path, method: 'GET' });
  await res.body.text();
  if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode}`);
}

/** One upload, answer read to the end; throws on a non-200. */
export async function upload(d: Pool | Client, body: Buffer): Promise<void> {
  const res = await d.request({
    path: '/upload',
    method: 'POST',
    body,
    headers: { 'content-type': 'application/octet-stream' },
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`upload: ${res.statusCode} ${text.slice(0, 200)}`);
}
