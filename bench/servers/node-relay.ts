/**
 * The floor for terminating TLS on both legs in node: CONNECT, TLS with a cached leaf per
 * host, then one TLS connection to the origin per tunnel and the decrypted bytes piped both
 * ways. It parses nothing, so it cannot govern anything; what clibroker spends beyond it is
 * the HTTP it reads and writes and the policy around it, and what it spends beyond nginx is
 * node's (its TLS sockets and streams). With no pool, every tunnel dials the origin: its S4
 * figures pay one more handshake than a pooled proxy's.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { connect, createSecureContext } from 'node:tls';
import { arg, serveIpc } from '../lib/child-ipc.js';
import { connectListener, leafContexts } from '../lib/leaves.js';

const upstreamPort = Number(arg('upstream-port'));
const upstream = createSecureContext({ ca: readFileSync(arg('upstream-ca'), 'utf8') });
const { caPem, contextFor } = leafContexts('bench node-relay CA');

const outer = connectListener(contextFor, (tls, host, socket) => {
  const up = connect({
    host: '127.0.0.1',
    port: upstreamPort,
    servername: host,
    secureContext: upstream,
    ALPNProtocols: ['http/1.1'],
  });
  up.setNoDelay(true);
  const cut = (): void => {
    tls.destroy();
    up.destroy();
    socket.destroy();
  };
  tls.on('error', cut);
  up.on('error', cut);
  tls.on('close', cut);
  up.on('close', cut);
  tls.pipe(up);
  up.pipe(tls);
});
outer.listen(0, '127.0.0.1', () => {
  serveIpc({ port: (outer.address() as AddressInfo).port, caPem }, () => {
    outer.closeAllConnections();
  });
});
