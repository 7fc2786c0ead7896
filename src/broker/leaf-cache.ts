/**
 * A bounded LRU of TLS SecureContexts. Minting a leaf is ~60 µs, but createSecureContext
 * costs ~0.7 ms (OpenSSL 3 builds a whole SSL_CTX; measured in bench/micro/cert-mint.ts), so
 * the context is what is cached, keyed by the host names its leaf covers:
 *   - a session's egress set of up to LEAF_GROUP_HOSTS hosts gets ONE leaf naming them all,
 *     built when the session opens and shared by every session with the same set;
 *   - a longer set is cut into groups of that many hosts (sorted by their labels from the
 *     right, so one vendor's hosts fall together), and a group's leaf is minted on the first
 *     CONNECT to any host of it: nothing is minted when the session opens, the leaf sent on
 *     every handshake names at most LEAF_GROUP_HOSTS hosts, and a 640-host list costs at most
 *     40 contexts, only for the groups it uses;
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

/**
 * The most hosts one leaf names. Sixteen names add ~0.4 KB to a certificate sent on every
 * handshake, and one context (~28 KiB resident, ~0.8 ms to build) then serves sixteen hosts.
 */
export const LEAF_GROUP_HOSTS = 16;

/**
 * The contexts a broker keeps: ~28 KiB each, so at most ~7 MiB — 256 groups of an egress
 * set cover 4096 hosts; a host outside every set takes one of its own. Eviction is by
 * recency alone: a child that probes many unknown hosts can push a group's context out, which
 * costs the next CONNECT to that group a new context, never a wrong one.
 */
export const LEAF_CACHE_MAX = 256;

export class LeafCache {
  readonly #ca: CertificateAuthority;
  readonly #max: number;
  // A Map iterates in insertion order: re-inserting on hit makes the first key the least recent.
  readonly #entries = new Map<string, SecureContext>();

  constructor(ca: CertificateAuthority, max = LEAF_CACHE_MAX) {
    this.#ca = ca;
    this.#max = max;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The SecureContext for a leaf covering `hosts` (a LeafGroup's key), minting it on first use. */
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

  /** The context for `host` as seen by a session whose leaf set is `set` (see leafSet). */
  forHost(host: string, set: LeafSet | undefined): SecureContext {
    const group = set?.groupOf(host);
    return group ? this.get(group.key, group.list) : this.get(host, [host]);
  }
}

/** The hosts one leaf names, with its cache key. */
export interface LeafGroup {
  readonly key: string;
  readonly list: readonly string[];
}

/** How a session's hosts share leaves. */
export interface LeafSet {
  /** the whole set as one group when it fits one leaf (the session builds it when it opens) */
  readonly whole: LeafGroup | undefined;
  /** the group `host` shares a leaf with; undefined for a host outside the set */
  groupOf(host: string): LeafGroup | undefined;
}

/** `api.github.com` → `com.github.api`: sorting by it keeps one domain's hosts together. */
const fromTheRight = (host: string): string => host.split('.').reverse().join('.');

function group(list: readonly string[]): LeafGroup {
  return { key: list.join(' '), list };
}

/**
 * A leaf set for an egress list (plus its sign-in hosts); undefined when it is empty. The
 * groups of a long list are cut on first use, so opening a session only copies the names.
 */
export function leafSet(hosts: Iterable<string>): LeafSet | undefined {
  const unique = [...new Set(hosts)];
  if (unique.length === 0) return undefined;
  if (unique.length <= LEAF_GROUP_HOSTS) {
    const whole = group(unique.sort((a, b) => compare(fromTheRight(a), fromTheRight(b))));
    const members = new Set(whole.list);
    return { whole, groupOf: (host) => (members.has(host) ? whole : undefined) };
  }
  let index: Map<string, number> | undefined;
  let sorted: string[] = [];
  const groups: LeafGroup[] = [];
  return {
    whole: undefined,
    groupOf(host) {
      if (!index) {
        sorted = unique
          .map((h) => [fromTheRight(h), h] as const)
          .sort((a, b) => compare(a[0], b[0]))
          .map(([, h]) => h);
        index = new Map(sorted.map((h, i) => [h, i]));
      }
      const i = index.get(host);
      if (i === undefined) return undefined;
      const g = Math.floor(i / LEAF_GROUP_HOSTS);
      groups[g] ??= group(sorted.slice(g * LEAF_GROUP_HOSTS, (g + 1) * LEAF_GROUP_HOSTS));
      return groups[g];
    },
  };
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
