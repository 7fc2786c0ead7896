/**
 * An embedded mock vendor: real HTTPS on 127.0.0.1 with its own CA, serving any number of
 * host names by SNI. It ships with the package so the demo and the end-to-end tests need no
 * network; the broker reaches it through `upstream.resolve` (with `upstream.allowAddresses: ['127.0.0.0/8']`:
 * loopback is refused otherwise) and trusts it via `upstream.ca`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import { createCertificateAuthority } from '../broker/ca.js';

/** A request as the mock vendor's handler sees it. */
export interface VendorRequest {
  method: string;
  host: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** What a mock vendor handler answers. */
export interface VendorResponse {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

/**
 * The trust store of the vendor's server contexts: empty. A server asks for no client
 * certificate, so it trusts nobody; without `ca` node would fill each context's store with
 * its bundled root certificates, which costs 30–50 ms the first time in a process.
 */
const NO_CLIENT_CAS: string[] = [];

/** Answers every request of a mock vendor. */
export type VendorHandler = (req: VendorRequest) => VendorResponse;

/** A running mock vendor: an HTTPS server on 127.0.0.1 with a CA of its own. */
export interface MockVendor {
  /** the port it listens on, on 127.0.0.1 */
  readonly port: number;
  /** PEM of the CA that signed the vendor's certificates (the broker's `upstream.ca`) */
  readonly caPem: string;
  /** every request the vendor received, in order */
  readonly log: VendorRequest[];
  /** maps any host to the vendor (the broker's `upstream.resolve`; it needs `allowAddresses: ['127.0.0.0/8']`) */
  resolve(host: string): { host: string; port: number };
  /** stops the server and ends its connections */
  close(): Promise<void>;
}

/** Starts a mock vendor whose handler answers every request. Bodies up to 16 MiB are kept. */
export async function startMockVendor(handler: VendorHandler): Promise<MockVendor> {
  const ca = createCertificateAuthority({ commonName: 'clibroker mock vendor CA' });
  const contexts = new Map<string, SecureContext>();
  const contextFor = (host: string): SecureContext => {
    let c = contexts.get(host);
    if (!c) {
      const leaf = ca.mintLeaf(host);
      c = createSecureContext({ key: leaf.keyPem, cert: leaf.certPem, ca: NO_CLIENT_CAS });
      contexts.set(host, c);
    }
    return c;
  };
  const first = ca.mintLeaf('localhost');
  const log: VendorRequest[] = [];
  const server: Server = createServer({
    key: first.keyPem,
    cert: first.certPem,
    ca: NO_CLIENT_CAS,
    SNICallback: (name, cb) => cb(null, contextFor(name)),
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    let n = 0;
    req.on('data', (c: Buffer) => {
      n += c.length;
      if (n <= 16 * 1024 * 1024) chunks.push(c);
    });
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'https://vendor.invalid');
      const vreq: VendorRequest = {
        method: req.method ?? 'GET',
        host: (req.headers.host ?? '').replace(/:443$/, ''),
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      log.push(vreq);
      let out: VendorResponse;
      try {
        out = handler(vreq);
      } catch (err) {
        out = { status: 500, body: { message: `mock vendor failed: ${(err as Error).message}` } };
      }
      const body =
        out.body === undefined ? '' : typeof out.body === 'string' ? out.body : JSON.stringify(out.body);
      res.writeHead(out.status, {
        'content-type': 'application/json; charset=utf-8',
        ...out.headers,
        'content-length': String(Buffer.byteLength(body)),
      });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    caPem: ca.certPem,
    log,
    resolve: () => ({ host: '127.0.0.1', port }),
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
