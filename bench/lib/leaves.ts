/** The bench's floor proxies mint a leaf per host from a CA of their own, once, as a proxy would. */
import { createSecureContext, type SecureContext } from 'node:tls';
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
