/**
 * A bounded LRU of TLS SecureContexts. Minting a leaf is ~60 µs, but createSecureContext
 * costs ~0.7 ms (OpenSSL 3 builds a whole SSL_CTX; measured in bench/micro/cert-mint.ts), so
 * the context is what is cached, keyed by the host names its leaf covers:
 *   - a session's egress set gets ONE leaf naming all its hosts, minted on the first CONNECT
 *     to any of them and shared by every session with the same set — a new host of the set
 *     costs no context at all;
 *   - any other host (refused in-band) gets a leaf of its own.
 * The chain is the leaf alone: the child trusts the CA itself, and sending the CA too costs
 * ~0.25 ms per context and bytes on every handshake.
 */
import { createSecureContext, type SecureContext } from 'node:tls';
import type { CertificateAuthority } from './ca.js';

/**
 * A leaf context's trust store: empty. The broker asks the child for no certificate, so the
 * store is never used to verify one, and the chain sent stays the leaf alone (the CA is in no
 * root store, so none was ever added). Without `ca` node fills every context's store with its
 * bundled roots: 30–50 ms the first time in a process, on the first CONNECT's path when no
 * upstream connection has loaded them yet.
 */
const NO_CLIENT_CAS: string[] = [];

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

  /** The SecureContext for a leaf covering `hosts` (a key from `hostsKey`), minting it on first use. */
  get(key: string, hosts: readonly string[]): SecureContext {
    const hit = this.#entries.get(key);
    if (hit) {
      this.#entries.delete(key);
      this.#entries.set(key, hit);
      return hit;
    }
    const leaf = this.#ca.mintLeaf(hosts);
    const ctx = createSecureContext({
      key: leaf.keyPem,
      cert: leaf.certPem,
      minVersion: 'TLSv1.2',
      ca: NO_CLIENT_CAS,
    });
    this.#entries.set(key, ctx);
    if (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!);
    return ctx;
  }

  /** The context for `host` as seen by a session whose leaf set is `set` (see SessionLeafSet). */
  forHost(host: string, set: LeafSet | undefined): SecureContext {
    return set?.hosts.has(host) ? this.get(set.key, set.list) : this.get(host, [host]);
  }
}

/** The hosts one shared leaf covers, with its cache key. */
export interface LeafSet {
  readonly key: string;
  readonly list: readonly string[];
  readonly hosts: ReadonlySet<string>;
}

/** A leaf set for an egress list; undefined when the list is too long for one certificate. */
export function leafSet(hosts: Iterable<string>, max = 100): LeafSet | undefined {
  const list = [...new Set(hosts)].sort();
  if (list.length === 0 || list.length > max) return undefined;
  return { key: list.join(' '), list, hosts: new Set(list) };
}
