/**
 * Test PKI: a CA and leaf certificates for local HTTPS servers (mock vendors, token servers),
 * minted with the broker's own CA code so tests need no openssl and no fixtures on disk.
 */
import { createCertificateAuthority } from '../../src/broker/ca.js';

export interface TestPki {
  /** PEM of the CA that signed every leaf: give it to clients (or to the broker's upstream.ca) */
  caPem: string;
  /** key + cert for an https.createServer serving all `hosts` via SNI-less default (first host) */
  leaf(host: string): { key: string; cert: string };
}

export function testPki(commonName = 'clibroker test vendor CA'): TestPki {
  const ca = createCertificateAuthority({ commonName });
  return {
    caPem: ca.certPem,
    leaf(host) {
      const l = ca.mintLeaf(host);
      return { key: l.keyPem, cert: l.certPem };
    },
  };
}
