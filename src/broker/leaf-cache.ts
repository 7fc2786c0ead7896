/**
 * A bounded LRU of TLS SecureContexts, one per intercepted host (issue 2: "a leaf minted per
 * host on first SNI and cached"). Minting is ~60 µs but createSecureContext parses the key
 * and chain (~0.5 ms), so the context, not just the PEM, is what is cached.
 */
import { createSecureContext, type SecureContext } from 'node:tls';
import type { CertificateAuthority } from './ca.js';

export class LeafCache {
  readonly #ca: CertificateAuthority;
  readonly #max: number;
  // A Map iterates in insertion order: re-inserting on hit makes the first key the least recent.
  readonly #entries = new Map<string, SecureContext>();

  constructor(ca: CertificateAuthority, max = 1024) {
    this.#ca = ca;
    this.#max = max;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The SecureContext for `host`, minting its leaf on first use. */
  get(host: string): SecureContext {
    const hit = this.#entries.get(host);
    if (hit) {
      this.#entries.delete(host);
      this.#entries.set(host, hit);
      return hit;
    }
    const leaf = this.#ca.mintLeaf(host);
    const ctx = createSecureContext({
      key: leaf.keyPem,
      cert: leaf.certPem + this.#ca.certPem,
      minVersion: 'TLSv1.2',
    });
    this.#entries.set(host, ctx);
    if (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!);
    return ctx;
  }
}
