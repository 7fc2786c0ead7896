/**
 * The one GET of an S5 child, with node's built-in modules only: a CONNECT through the proxy
 * when one is given, TLS to `api.bench.example`, one request, the whole response read. The
 * load generator's undici client (bench/lib/client.ts) would add undici's own import to every
 * child and blur what the broker costs to start; nginx's row pays no client start-up at all.
 */
import { request } from 'node:http';
import type { Socket } from 'node:net';
import { connect } from 'node:tls';

const HOST = 'api.bench.example';

export interface FirstGet {
  port: number;
  caPem: string;
  /** `Proxy-Authorization` for the CONNECT; no proxy when undefined */
  proxyAuth?: string;
}

/** Resolves with the response's status once its body has ended. */
export async function firstGet(o: FirstGet): Promise<number> {
  const socket = o.proxyAuth === undefined ? undefined : await tunnel(o.port, o.proxyAuth);
  const tls = connect({
    ...(socket ? { socket } : { host: '127.0.0.1', port: o.port }),
    servername: HOST,
    ca: o.caPem,
    ALPNProtocols: ['http/1.1'],
  });
  return new Promise<number>((resolve, reject) => {
    tls.once('error', reject);
    tls.once('secureConnect', () => {
      tls.write(`GET /bench HTTP/1.1\r\nhost: ${HOST}\r\nconnection: close\r\n\r\n`);
    });
    const chunks: Buffer[] = [];
    tls.on('data', (c: Buffer) => chunks.push(c));
    tls.once('end', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      tls.destroy();
      if (status === 200) resolve(status);
      else reject(new Error(`first GET answered ${text.slice(0, 200)}`));
    });
  });
}

function tunnel(port: number, auth: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'CONNECT',
      path: `${HOST}:443`,
      headers: { host: `${HOST}:443`, 'proxy-authorization': auth },
    });
    req.once('connect', (res, socket) => {
      if (res.statusCode === 200) resolve(socket);
      else reject(new Error(`CONNECT answered ${res.statusCode}`));
    });
    req.once('error', reject);
    req.end();
  });
}
