/**
 * The plain CONNECT tunnel: a minimal node net pipe with no TLS termination. It is the floor
 * for any proxy hop (one extra process and two extra copies) and shows what of clibroker's
 * overhead is interception rather than proxying.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { arg, serveIpc } from '../lib/child-ipc.js';

const upstreamPort = Number(arg('upstream-port'));
const server = createServer();
server.on('connect', (_req: IncomingMessage, client: Socket, head: Buffer) => {
  // Every name resolves to the bench upstream (traffic stays on 127.0.0.1).
  const up = connect(upstreamPort, '127.0.0.1', () => {
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) up.write(head);
    up.pipe(client);
    client.pipe(up);
  });
  up.setNoDelay(true);
  client.setNoDelay(true);
  up.on('error', () => client.destroy());
  client.on('error', () => up.destroy());
  up.on('close', () => client.destroy());
  client.on('close', () => up.destroy());
});
server.listen(0, '127.0.0.1', () => {
  serveIpc({ port: (server.address() as AddressInfo).port }, () => {
    server.closeAllConnections();
  });
});
