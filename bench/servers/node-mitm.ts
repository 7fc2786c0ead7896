/**
 * The floor for interception in node: the least a node:http MITM does — CONNECT, terminate
 * TLS with a leaf per host (cached SecureContext), parse with node's http server, forward
 * with a keep-alive https.Agent, pipe the answer back. No policy, no audit, no budgets. The
 * gap between it and clibroker is what clibroker's own pipeline costs (the anchor:
 * "a plain node:http MITM ~52 ms" of CPU per 1000 requests).
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { arg, serveIpc } from '../lib/child-ipc.js';
import { connectListener, leafContexts } from '../lib/leaves.js';

const upstreamPort = Number(arg('upstream-port'));
const agent = new Agent({ keepAlive: true, maxSockets: 32, ca: readFileSync(arg('upstream-ca'), 'utf8') });
const { caPem, contextFor } = leafContexts('bench node-mitm CA');

const inner = createServer((req: IncomingMessage, res: ServerResponse) => {
  const host = (req.socket as TLSSocket & { servername?: string }).servername || String(req.headers.host);
  const headers = { ...req.headers };
  delete headers.connection;
  const up = request(
    {
      host: '127.0.0.1',
      port: upstreamPort,
      servername: host,
      method: req.method,
      path: req.url,
      headers,
      agent,
    },
    (ures) => {
      res.writeHead(ures.statusCode ?? 502, ures.headers);
      ures.pipe(res);
    },
  );
  up.on('error', () => res.destroy());
  req.pipe(up);
});

const outer = connectListener(contextFor, (tls, _host, socket) => {
  tls.on('error', () => socket.destroy());
  inner.emit('connection', tls);
});
outer.listen(0, '127.0.0.1', () => {
  serveIpc({ port: (outer.address() as AddressInfo).port, caPem }, () => {
    outer.closeAllConnections();
    inner.closeAllConnections();
  });
});
