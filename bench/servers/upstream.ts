/**
 * The one local HTTPS upstream every path talks to: node https, keep-alive, a small fixed
 * JSON answer for every GET and an upload sink (POST /upload) that counts and drops the body.
 * One wildcard leaf (*.bench.example) serves every name, so S4's cold hosts cost the
 * upstream a handshake and no minting of its own.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createCertificateAuthority } from '../../src/broker/ca.js';
import { serveIpc } from '../lib/child-ipc.js';

const ca = createCertificateAuthority({ commonName: 'clibroker bench upstream CA' });
const leaf = ca.mintLeaf('*.bench.example');
const BODY = Buffer.from(JSON.stringify({ id: 1, name: 'bench', items: [1, 2, 3], ok: true }));

const server = createServer(
  { key: leaf.keyPem, cert: leaf.certPem, keepAliveTimeout: 120_000, maxHeaderSize: 32 * 1024 },
  (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET') {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': BODY.length });
      res.end(BODY);
      return;
    }
    let n = 0;
    req.on('data', (c: Buffer) => {
      n += c.length;
    });
    req.on('end', () => {
      const out = Buffer.from(JSON.stringify({ bytes: n }));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': out.length });
      res.end(out);
    });
  },
);
server.headersTimeout = 120_000;
server.requestTimeout = 0;
server.listen(0, '127.0.0.1', () => {
  serveIpc({ port: (server.address() as AddressInfo).port, caPem: ca.certPem }, () => {
    server.closeAllConnections();
  });
});
