/** The method table (docs/policy.md), and the class order. */
import type { WireClass } from './types.js';

const RANK: Readonly<Record<WireClass, number>> = { read: 0, write: 1, destructive: 2 };

/** read < write < destructive. */
export function classRank(c: WireClass): number {
  return RANK[c];
}

/** The higher of two classes. */
export function maxClass(a: WireClass, b: WireClass): WireClass {
  return RANK[a] >= RANK[b] ? a : b;
}

/**
 * Methods are case-sensitive (RFC 9110 §9.1): `get` is not GET, so it falls to "any
 * other method" and classifies write.
 */
const TABLE: ReadonlyMap<string, { class: WireClass; reason: string }> = new Map([
  ['GET', { class: 'read', reason: 'method-read' }],
  ['HEAD', { class: 'read', reason: 'method-read' }],
  ['OPTIONS', { class: 'read', reason: 'method-read' }],
  ['POST', { class: 'write', reason: 'method-write' }],
  ['PUT', { class: 'write', reason: 'method-write' }],
  ['PATCH', { class: 'write', reason: 'method-write' }],
  ['DELETE', { class: 'destructive', reason: 'method-destructive' }],
]);

const OTHER = { class: 'write', reason: 'method-other' } as const;

/** The class the method alone gives. */
export function methodClass(method: string): { class: WireClass; reason: string } {
  return TABLE.get(method) ?? OTHER;
}
