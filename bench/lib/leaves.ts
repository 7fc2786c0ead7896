/**
 * What the bench's floor proxies share: a leaf per host minted once from a CA of their own,
 * and a CONNECT listener that answers 200 and terminates TLS with that host's leaf.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { createSecureContext, type SecureContext, TLSSocket } from 'node:tls';
import { createCertificateAuthority } from '../../src/broker/ca.js';

/** A CA named `commonName`, and a cached server context per host name signed by it. */
export function leafContexts(commonName: string): { caPem: string; contextFor(host: string): SecureContext } {
  const ca = createCertificateAuthority({ commonName });
  const contexts = new Map<string, SecureContext>();
  return {
    caPem: ca.certPem,
    contextFor(host) {
      let ctx = contexts.get(host);
      if (!ctx) {
        const leaf = ca.mintLeaf(host);
        ctx = createSecureContext({ key: leaf.keyPem, cert: leaf.certPem + ca.certPem });
        contexts.set(host, ctx);
      }
      return ctx;
    },
  };
}

/** A CONNECT listener handing each tunnel's TLS socket (the leaf of the host asked for) and that host to `onTunnel`. */
export function connectListener(
  contextFor: (host: string) => SecureContext,
  onTunnel: (tls: TLSSocket, host: string, socket: Socket) => void,
): Server {
  const outer = createServer();
  outer.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const host = (req.url ?? '').split(':')[0]!;
    socket.setNoDelay(true);
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) socket.unshift(head);
    const tls = new TLSSocket(socket, {
      isServer: true,
      secureContext: contextFor(host),
      ALPNProtocols: ['http/1.1'],
    });
    onTunnel(tls, host, socket);
  });
  return outer;
}
