/**
 * The few DER (X.690) encoders certificate minting needs. Hand-written rather than a
 * dependency: a leaf is a fixed template, and building it directly costs a few
 * microseconds where general X.509 libraries spend ~1 ms.
 */

function encodeLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** A TLV with the given tag byte. */
export function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = content.length === 1 ? content[0]! : Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), encodeLength(body.length), body]);
}

export const seq = (...items: Buffer[]): Buffer => tlv(0x30, ...items);
export const set = (...items: Buffer[]): Buffer => tlv(0x31, ...items);
export const octets = (b: Buffer): Buffer => tlv(0x04, b);
export const utf8 = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
export const bool = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0]));
/** context-specific, constructed ([n] EXPLICIT or constructed IMPLICIT) */
export const ctx = (n: number, ...items: Buffer[]): Buffer => tlv(0xa0 | n, ...items);
/** context-specific, primitive ([n] IMPLICIT of a primitive type such as dNSName) */
export const ctxPrim = (n: number, b: Buffer): Buffer => tlv(0x80 | n, b);

/** A non-negative INTEGER from big-endian magnitude bytes. */
export function uint(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const b = bytes.subarray(i);
  return tlv(0x02, (b[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), b]) : b);
}

export const smallInt = (n: number): Buffer => uint(Buffer.from([n]));

/** BIT STRING with no unused bits. */
export const bits = (b: Buffer): Buffer => tlv(0x03, Buffer.from([0]), b);

/** KeyUsage-style BIT STRING from bit numbers (bit 0 = most significant bit of the first byte). */
export function namedBits(bitNumbers: readonly number[]): Buffer {
  const max = Math.max(...bitNumbers);
  const bytes = Buffer.alloc(Math.floor(max / 8) + 1);
  for (const n of bitNumbers) bytes[n >> 3]! |= 0x80 >> (n & 7);
  const unused = 7 - (max & 7);
  return tlv(0x03, Buffer.from([unused]), bytes);
}

const oidCache = new Map<string, Buffer>();

export function oid(dotted: string): Buffer {
  const cached = oidCache.get(dotted);
  if (cached) return cached;
  const parts = dotted.split('.').map(Number);
  const out: number[] = [40 * parts[0]! + parts[1]!];
  for (const p of parts.slice(2)) {
    const stack: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) stack.unshift((v & 0x7f) | 0x80);
    out.push(...stack);
  }
  const enc = tlv(0x06, Buffer.from(out));
  oidCache.set(dotted, enc);
  return enc;
}

/** UTCTime before 2050, GeneralizedTime from then on (RFC 5280 §4.1.2.5). */
export function time(d: Date): Buffer {
  const iso = d.toISOString(); // 2026-11-30T23:07:01.123Z
  const compact = iso.slice(0, 19).replace(/[-:T]/g, '') + 'Z';
  return d.getUTCFullYear() < 2050
    ? tlv(0x17, Buffer.from(compact.slice(2), 'ascii'))
    : tlv(0x18, Buffer.from(compact, 'ascii'));
}

export function toPem(label: string, der: Buffer): string {
  const b64 = der.toString('base64').replace(/(.{64})/g, '$1\n');
  return `-----BEGIN ${label}-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END ${label}-----\n`;
}
