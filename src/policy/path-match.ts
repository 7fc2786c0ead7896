/**
 * Path matching for overrides, and the one path normalisation the policy uses. A loosening
 * override sees the path only if it is unambiguous; a tightening one sees it in every
 * spelling a server might route (the same readings GraphQL detection uses), so a request
 * cannot dodge it by spelling the path differently.
 */

export interface PathView {
  /**
   * no dot-segment (nor a segment of dots and whitespace), encoded or raw (back)slash, empty
   * segment, `;`, `#`, control character, bad escape or double encoding (`%25`)
   */
  safe: boolean;
  /** percent-decoded segments as sent (exact matching, for loosening) */
  segments: string[];
  /**
   * every reading a tightening override is matched against: the segments lower-cased; and
   * for each decoding round, lower-cased, `\` and `%2F`/`%5C` as separators, `;params`
   * dropped, empty and `.` segments dropped, `..` resolved — once as is and once with each
   * segment cut before its first character outside `[a-z0-9_-]` (`graphql.json` → `graphql`);
   * for a path with a `graphql` segment also with `..` kept, and cut after that segment
   * (`/graphql/x` is served by the handler at `/graphql`)
   */
  readings: string[][];
}

/** The value of a hex digit, or -1. */
function hex(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 0x20;
  return l >= 97 && l <= 102 ? l - 87 : -1;
}

/**
 * One round of lenient percent-decoding: `%XX` as a byte (bytes above 0x7F become the
 * Latin-1 character: only ASCII names are compared) and IIS's `%uXXXX`; a malformed escape
 * stays as it is, where `decodeURIComponent` would give up on the whole string.
 */
export function lenientDecode(s: string): string {
  let i = s.indexOf('%');
  if (i === -1) return s;
  let out = '';
  let from = 0;
  for (; i !== -1; i = s.indexOf('%', i + 1)) {
    const a = s.charCodeAt(i + 1);
    if (a === 117 || a === 85) {
      const h1 = hex(s.charCodeAt(i + 2));
      const h2 = hex(s.charCodeAt(i + 3));
      const h3 = hex(s.charCodeAt(i + 4));
      const h4 = hex(s.charCodeAt(i + 5));
      if (h1 >= 0 && h2 >= 0 && h3 >= 0 && h4 >= 0) {
        out += s.slice(from, i) + String.fromCharCode((h1 << 12) | (h2 << 8) | (h3 << 4) | h4);
        from = i + 6;
        i += 5;
      }
      continue;
    }
    const h1 = hex(a);
    const h2 = hex(s.charCodeAt(i + 2));
    if (h1 >= 0 && h2 >= 0) {
      out += s.slice(from, i) + String.fromCharCode((h1 << 4) | h2);
      from = i + 3;
      i += 2;
    }
  }
  return out + s.slice(from);
}

/** An overlong UTF-8 sequence, as lenientDecode leaves it (one Latin-1 character per byte). */
const OVERLONG = /[\xc0\xc1][\x80-\xbf]|\xe0[\x80-\x9f][\x80-\xbf]|\xf0[\x80-\x8f][\x80-\xbf][\x80-\xbf]/g;

/** The code point an overlong sequence spells (`%c1%a7` is `g`, `%c0%af` is `/`). */
function overlongChar(m: string): string {
  const c = (k: number) => m.charCodeAt(k) & 0x3f;
  if (m.length === 2) return String.fromCharCode(((m.charCodeAt(0) & 0x1f) << 6) | c(1));
  if (m.length === 3) return String.fromCharCode(((m.charCodeAt(0) & 0x0f) << 12) | (c(1) << 6) | c(2));
  return String.fromCharCode((c(1) << 12) | (c(2) << 6) | c(3));
}

/**
 * The path as sent and after each round of decoding, up to three rounds (a proxy that
 * decodes before forwarding and a server that decodes again make two; one more for margin),
 * each round also with its overlong UTF-8 sequences read as the characters they spell (IIS 4/5
 * and old Java decoders did; `%c1%a7raphql` is `graphql` to them).
 */
export function decodeRounds(path: string): string[] {
  const out = [path];
  let p = path;
  for (let r = 0; r < 3 && p.indexOf('%') !== -1; r++) {
    const d = lenientDecode(p);
    if (d === p) break;
    out.push(d);
    OVERLONG.lastIndex = 0;
    if (OVERLONG.test(d)) out.push(d.replace(OVERLONG, overlongChar));
    p = d;
  }
  return out;
}

function decode(seg: string): string | undefined {
  if (!seg.includes('%')) return seg;
  try {
    return decodeURIComponent(seg);
  } catch {
    return undefined;
  }
}

/** `[a-z0-9_-]*` prefix of a lower-cased segment. */
function nameRun(seg: string): string {
  let i = 0;
  while (i < seg.length) {
    const c = seg.charCodeAt(i);
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95 || c === 45) i++;
    else break;
  }
  return seg.slice(0, i);
}

/**
 * Lower-cased, split on `/` and `\`, `;params` dropped, empty and `.` dropped, `..` resolved
 * (or kept, for servers that route before resolving), each segment cut to its name run if asked.
 */
function segmentsOf(text: string, cut: boolean, resolve: boolean): string[] {
  const out: string[] = [];
  for (let part of text.toLowerCase().split(/[\\/]/)) {
    const semi = part.indexOf(';');
    if (semi !== -1) part = part.slice(0, semi);
    part = part.trim();
    if (part === '' || part === '.') continue;
    if (part === '..' && resolve) out.pop();
    else out.push(cut ? nameRun(part) || part : part);
  }
  return out;
}

/**
 * A GraphQL handler also serves every path below it (prefix mounts), so a reading with a
 * `graphql` segment is also read as the endpoint itself: the segments up to that one.
 */
function endpointPrefixes(r: readonly string[], out: string[][]): void {
  for (let k = 0; k < r.length; k++) {
    if (nameRun(r[k]!) === 'graphql' && k < r.length - 1) out.push([...r.slice(0, k), 'graphql']);
  }
}

/** Analyse the path part of a target (everything before `?`). */
export function viewPath(path: string): PathView {
  let safe = path.startsWith('/') && !/[\\;#]/.test(path) && !/%2f|%5c/i.test(path);
  const raw = path.startsWith('/') ? path.slice(1).split('/') : [path];
  const segments: string[] = [];
  for (const r of raw) {
    const d = decode(r);
    // a `%` left after decoding is a second round for a server behind a decoding proxy
    // (`%252F` is `/` to it); IIS trims trailing spaces and dots (`.. ` is `..` to it)
    if (d === undefined || d === '' || (d.includes('.') && /^[\s.]*$/.test(d)) || /[\x00-\x1f\x7f%]/.test(d))
      safe = false;
    segments.push(d ?? r);
  }
  const readings: string[][] = [segments.map((x) => x.toLowerCase())];
  const texts = decodeRounds(path);
  // a `#` in a target is no fragment to every server: read the path with and without it
  const hash = path.indexOf('#');
  if (hash !== -1) texts.push(...decodeRounds(path.slice(0, hash)));
  for (const text of texts) {
    readings.push(segmentsOf(text, false, true), segmentsOf(text, true, true));
    if (/graphql/i.test(text)) {
      const kept = segmentsOf(text, true, false);
      readings.push(kept);
      for (const r of [readings[readings.length - 2]!, kept]) endpointPrefixes(r, readings);
    }
  }
  return { safe, segments, readings };
}

/** `*` matches exactly one non-empty segment; other segments compare exactly. */
export function segmentsMatch(pattern: readonly string[], segs: readonly string[]): boolean {
  if (pattern.length !== segs.length) return false;
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const s = segs[i]!;
    if (p === '*' ? s === '' : p !== s) return false;
  }
  return true;
}

export interface CompiledPattern {
  exact: string[];
  lower: string[];
}

// Overrides come from a manifest and repeat on every request; splitting them once keeps 256
// overrides cheap. Bounded: cleared when it grows past what one manifest can hold.
const compiled = new Map<string, CompiledPattern>();

/** A pattern's segments (`/a/*` → ['a', '*']), exact and lower-cased. */
export function compilePattern(pattern: string): CompiledPattern {
  let c = compiled.get(pattern);
  if (c === undefined) {
    const exact = pattern.slice(1).split('/');
    c = { exact, lower: exact.map((x) => x.toLowerCase()) };
    if (compiled.size >= 4096) compiled.clear();
    compiled.set(pattern, c);
  }
  return c;
}
