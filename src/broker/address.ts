/**
 * Which upstream addresses the broker connects to. An egress name is a DNS name, and DNS
 * answers are not ours: a name can resolve (or be re-pointed) to the loopback interface, the
 * cloud metadata service or a private network, which would turn the broker into a way in.
 * So every address a connection is about to use is checked against the special-purpose
 * ranges below, and refused unless the operator allows its range (`upstream.allowAddresses`).
 * Pure: parsing and range arithmetic, no I/O.
 */
import { isIP } from 'node:net';

/** An address or a range of them: `bits` leading bits of `base` are fixed. */
export interface Cidr {
  readonly family: 4 | 6;
  readonly base: bigint;
  readonly bits: number;
}

/** A refused address: which special-purpose range it is in, and what kind that is. */
export interface AddressHit {
  /** the range, e.g. `10.0.0.0/8` (for an embedding form, the embedded IPv4 range) */
  range: string;
  /** e.g. `private`, `loopback`, `NAT64 address embedding a private IPv4 address` */
  kind: string;
}

interface Address {
  readonly family: 4 | 6;
  readonly value: bigint;
}

const WIDTH = { 4: 32, 6: 128 } as const;

/** IPv4-in-IPv6 forms that reach the embedded IPv4 address: where it sits in the 128 bits. */
interface Embedding {
  readonly kind: string;
  /** right shift that brings the embedded address to the low 32 bits */
  readonly shift: bigint;
}

interface Special {
  readonly cidr: Cidr;
  readonly text: string;
  readonly kind: string;
  /** set for forms that route to an embedded IPv4 address: that address is checked instead */
  readonly embeds?: Embedding;
}

// IANA's special-purpose registries (IPv4 and IPv6) plus multicast, broadcast and the
// deprecated ranges no public service is reachable at. Order: more specific first.
const SPECIAL_V4: readonly (readonly [string, string])[] = [
  ['0.0.0.0/8', 'unspecified ("this network")'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared address space (CGNAT)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local (cloud metadata)'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', '6to4 relay anycast (deprecated)'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'limited broadcast'],
  ['240.0.0.0/4', 'reserved'],
];

const SPECIAL_V6: readonly (readonly [string, string, Embedding?])[] = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'IPv4-compatible (deprecated)'],
  ['64:ff9b::/96', 'NAT64', { kind: 'NAT64', shift: 0n }],
  ['64:ff9b:1::/48', 'NAT64 local-use'],
  // after NAT64, which lies inside it
  ['::/8', 'reserved'],
  ['100::/64', 'discard-only'],
  ['2001::/32', 'Teredo'],
  ['2001:2::/48', 'benchmarking'],
  ['2001:10::/28', 'ORCHID (deprecated)'],
  ['2001:20::/28', 'ORCHIDv2'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4', { kind: '6to4', shift: 80n }],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'segment routing (SRv6)'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local (deprecated)'],
  ['ff00::/8', 'multicast'],
];

/** `::ffff:0:0/96`: the socket talks IPv4 to the embedded address, so it is that address. */
const MAPPED: Cidr = { family: 6, base: 0xffffn << 32n, bits: 96 };

// parsed on the first check, not when the module loads (the first IPv6 parse compiles node's
// address pattern, several ms)
let special: readonly Special[] | undefined;
const specials = (): readonly Special[] =>
  (special ??= [
    ...SPECIAL_V4.map(([text, kind]) => ({ cidr: mustParse(text), text, kind })),
    ...SPECIAL_V6.map(([text, kind, embeds]) => ({
      cidr: mustParse(text),
      text,
      kind,
      ...(embeds ? { embeds } : {}),
    })),
  ]);

/** The ranges refused by default, for docs and tests: `[range, kind]`. */
export const SPECIAL_RANGES: readonly (readonly [string, string])[] = [...SPECIAL_V4, ...SPECIAL_V6].map(
  ([text, kind]) => [text, kind],
);

/** Parses an IPv4 or IPv6 address (an IPv6 zone such as `%eth0` is ignored); undefined if it is none. */
export function parseAddress(text: string): Address | undefined {
  const family = isIP(text);
  if (family === 4) return { family: 4, value: v4(text) };
  if (family !== 6) return undefined;
  let s = text.replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    const n = v4(dotted[1]!);
    s = `${s.slice(0, dotted.index)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = s.split('::') as [string, string?];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  let value = 0n;
  for (const g of groups) value = (value << 16n) | BigInt(`0x${g}`);
  return { family: 6, value };
}

function v4(text: string): bigint {
  return text.split('.').reduce((n, octet) => (n << 8n) | BigInt(Number(octet)), 0n);
}

function formatV4(n: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 0xffn)).join('.');
}

/** RFC 5952 text: lower-case hex, the longest run of two or more zero groups as `::`. */
function formatV6(n: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((n >> BigInt(112 - 16 * i)) & 0xffffn));
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best === -1) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/**
 * Parses `address/bits` (or a bare address: that one address). The address must be the
 * range's first one (`10.0.0.0/8`, not `10.1.2.3/8`), so a range never means more than it says.
 * @throws TypeError on anything else
 */
export function parseCidr(text: unknown): Cidr {
  if (typeof text !== 'string')
    throw new TypeError(`an address range must be a string such as "127.0.0.0/8", not ${typeof text}`);
  const shown = JSON.stringify(text.slice(0, 64));
  const slash = text.indexOf('/');
  const addrText = slash === -1 ? text : text.slice(0, slash);
  const addr = addrText.includes('%') ? undefined : parseAddress(addrText);
  if (!addr)
    throw new TypeError(
      `${shown} is not an address range: expected an IPv4 or IPv6 address, optionally with /prefix-length, such as "127.0.0.0/8" or "::1/128"`,
    );
  const width = WIDTH[addr.family];
  const bitsText = slash === -1 ? String(width) : text.slice(slash + 1);
  if (!/^(0|[1-9][0-9]{0,2})$/.test(bitsText) || Number(bitsText) > width) {
    throw new TypeError(
      `${shown} is not an address range: the prefix length must be a whole number from 0 to ${width}`,
    );
  }
  const bits = Number(bitsText);
  const hostMask = (1n << BigInt(width - bits)) - 1n;
  if ((addr.value & hostMask) !== 0n) {
    const base = addr.value & ~hostMask;
    throw new TypeError(
      `${shown} is not an address range: bits beyond the /${bits} prefix are set; write "${addr.family === 4 ? formatV4(base) : formatV6(base)}/${bits}"`,
    );
  }
  // A range written in the IPv4-mapped form means those IPv4 addresses.
  if (addr.family === 6 && bits >= 96 && contains(MAPPED, addr))
    return { family: 4, base: addr.value & 0xffffffffn, bits: bits - 96 };
  return { family: addr.family, base: addr.value, bits };
}

function mustParse(text: string): Cidr {
  return parseCidr(text);
}

function contains(c: Cidr, a: Address): boolean {
  if (c.family !== a.family) return false;
  const shift = BigInt(WIDTH[c.family] - c.bits);
  return a.value >> shift === c.base >> shift;
}

/** The broker's address rule: special-purpose ranges refused, except those the operator allows. */
export interface AddressPolicy {
  /** The range that refuses `address`, or undefined when the broker may connect to it. */
  check(address: string): AddressHit | undefined;
}

/**
 * @param allow ranges the operator allows although they are special-purpose (`127.0.0.0/8`
 *   for a mock vendor on loopback, `10.20.0.0/16` for an on-premises vendor host)
 * @throws TypeError when an entry is not an address range
 */
export function addressPolicy(allow: readonly string[] = []): AddressPolicy {
  if (!Array.isArray(allow))
    throw new TypeError('upstream.allowAddresses must be an array of address ranges such as ["127.0.0.0/8"]');
  const allowed = allow.map((entry, i) => {
    try {
      return parseCidr(entry);
    } catch (err) {
      throw new TypeError(`upstream.allowAddresses[${i}]: ${(err as Error).message}`);
    }
  });
  const isAllowed = (a: Address): boolean => allowed.some((c) => contains(c, a));
  return {
    check(text) {
      let a = parseAddress(text);
      if (!a) return { range: 'not an IP address', kind: 'unparseable' };
      if (contains(MAPPED, a)) a = { family: 4, value: a.value & 0xffffffffn };
      const s = specials().find((r) => contains(r.cidr, a));
      if (!s || isAllowed(a)) return undefined;
      if (!s.embeds) return { range: s.text, kind: s.kind };
      // NAT64 and 6to4 reach the embedded IPv4 address: it is what must be public (or allowed).
      const inner: Address = { family: 4, value: (a.value >> s.embeds.shift) & 0xffffffffn };
      const innerHit = specials().find((r) => contains(r.cidr, inner));
      if (!innerHit || isAllowed(inner)) return undefined;
      return {
        range: innerHit.text,
        kind: `${s.embeds.kind} address embedding a ${innerHit.kind} IPv4 address`,
      };
    },
  };
}
