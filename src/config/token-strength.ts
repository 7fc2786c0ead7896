/**
 * How hard a bearer token is to guess: CONFIG_SECRET_WEAK below 128 bits. The estimate,
 * from the token alone (one trailing line break is not part of it, as for every secret):
 *
 *   alphabet  = 16 when every character is a hex digit, else the sum of the classes seen
 *               (10 digits, 26 lower-case, 26 upper-case, 33 other printable characters);
 *   per char  = log2(min(alphabet, max(distinct characters, 16)));
 *   length    = the length of the unit it repeats, when it repeats one (`abcabcab` counts as 3);
 *   bits      = length × per char.
 *
 * And a token with fewer than 10 distinct characters is weak whatever its length. So 32
 * random bytes (`openssl rand -hex 32`: 64 hex digits, 256 bits; or base64, ~256) pass, 16
 * random bytes in hex are estimated at 128 and pass, a UUID v4 (122 random bits, estimated
 * ~140 but 36 characters of hex and dashes) passes only by the estimate, and `changeme`-like
 * values or a few dictionary words never do. An estimate, not a measure: a token built from a
 * guessable phrase can pass it. The value is never returned or shown, nor any part of it.
 */

export const WEAK_BELOW_BITS = 128;
const MIN_DISTINCT = 10;

/** The length of the shortest unit the token repeats at least twice (its own length when none). */
function period(chars: readonly string[]): number {
  const n = chars.length;
  for (let p = 1; p <= n / 2; p++) {
    let ok = true;
    for (let i = p; i < n && ok; i++) ok = chars[i] === chars[i - p];
    if (ok) return p;
  }
  return n;
}

/** The estimated strength of a token, in bits (rounded down). */
export function tokenBits(token: string): number {
  const chars = [...token];
  if (chars.length === 0) return 0;
  const distinct = new Set(chars).size;
  let alphabet: number;
  if (chars.every((c) => /[0-9a-fA-F]/.test(c))) alphabet = 16;
  else {
    alphabet = 0;
    if (chars.some((c) => /[0-9]/.test(c))) alphabet += 10;
    if (chars.some((c) => /[a-z]/.test(c))) alphabet += 26;
    if (chars.some((c) => /[A-Z]/.test(c))) alphabet += 26;
    if (chars.some((c) => !/[0-9A-Za-z]/.test(c))) alphabet += 33;
  }
  const perChar = Math.log2(Math.max(2, Math.min(alphabet, Math.max(distinct, 16))));
  return Math.floor(period(chars) * perChar);
}

/** Why a token is weak, without any part of it; undefined when it is strong enough. */
export function tokenWeakness(token: string): string | undefined {
  const t = token.endsWith('\r\n') ? token.slice(0, -2) : token.endsWith('\n') ? token.slice(0, -1) : token;
  const distinct = new Set([...t]).size;
  const bits = tokenBits(t);
  if (distinct < MIN_DISTINCT)
    return `it has fewer than ${MIN_DISTINCT} distinct characters (about ${bits} bits estimated, at least ${WEAK_BELOW_BITS} needed)`;
  if (bits < WEAK_BELOW_BITS) return `about ${bits} bits estimated, fewer than ${WEAK_BELOW_BITS}`;
  return undefined;
}
