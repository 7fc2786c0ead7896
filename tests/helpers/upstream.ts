/**
 * A recording HTTPS upstream on 127.0.0.1 (mitmproxy's tflow(), for real sockets): every
 * request it receives is kept with its headers and body hash, so tests can assert what did
 * and — more often — what did not reach the vendor.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type TestPki, testPki } from './pki.js';

export interface Received {
  method: string;
  url: string;
  host: string;
  headers: IncomingMessage['headers'];
  rawHeaders: string[];
  bodyBytes: number;
  bodySha256: string;
  body: Buffer;
}

export type Route = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

export interface Upstream {
  readonly port: number;
  readonly pki: TestPki;
  readonly received: Received[];
  /** maps every host to this upstream (pass as broker `upstream.resolve`, with `allowAddresses: ['127.0.0.0/8']`) */
  resolve(host: string): { host: string; port: number };
  route(fn: Route): void;
  close(): Promise<void>;
}

/** Default route: 200 JSON echo of method, url and body size. */
const echo: Route = (req, res, body) => {
  const out = JSON.stringify({ method: req.method, url: req.url, bytes: body.length });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
  res.end(out);
};

export async function startUpstream(
  hosts: readonly string[] = ['api.example.com'],
  opts: { keepBody?: boolean } = {},
): Promise<Upstream> {
  const pki = testPki();
  const leaves = new Map(hosts.map((h) => [h, pki.leaf(h)]));
  const first = leaves.get(hosts[0]!)!;
  const received: Received[] = [];
  let route: Route = echo;
  const server: Server = createServer({
    key: first.key,
    cert: first.cert,
    SNICallback: (name, cb) => {
      const l = leaves.get(name) ?? pki.leaf(name);
      leaves.set(name, l);
      import('node:tls').then((tls) => cb(null, tls.createSecureContext({ key: l.key, cert: l.cert })), cb);
    },
    keepAliveTimeout: 30_000,
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const hash = createHash('sha256');
    const chunks: Buffer[] = [];
    let n = 0;
    req.on('data', (c: Buffer) => {
      n += c.length;
      hash.update(c);
      if (opts.keepBody !== false && n <= 1024 * 1024) chunks.push(c);
    });
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      received.push({
        method: req.method!,
        url: req.url!,
        host: req.headers.host ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        bodyBytes: n,
        bodySha256: hash.digest('hex'),
        body,
      });
      route(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    pki,
    received,
    resolve: () => ({ host: '127.0.0.1', port }),
    route(fn) {
      route = fn;
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
