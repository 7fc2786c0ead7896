/**
 * Path matching for overrides. A loosening override sees the path only if it is
 * unambiguous; a tightening one sees it after every normalisation a server might apply, so
 * a request cannot dodge it by spelling the path differently.
 */

export interface PathView {
  /** no dot-segment, encoded or raw (back)slash, empty segment, control character or bad escape */
  safe: boolean;
  /** percent-decoded segments as sent (exact matching, for loosening) */
  segments: string[];
  /** segments, lower-cased (tightening compares case-insensitively) */
  segmentsLower: string[];
  /** lower-cased, ;params dropped, \ and %2F/%5C as separators, dot-segments resolved */
  normalised: string[];
}

function decode(seg: string): string | undefined {
  if (!seg.includes('%')) return seg;
  try {
    return decodeURIComponent(seg);
  } catch {
    return undefined;
  }
}

/** Analyse the path part of a target (no query). */
export function viewPath(path: string): PathView {
  let safe = path.startsWith('/') && !path.includes('\\') && !/%2f|%5c/i.test(path);
  const raw = path.startsWith('/') ? path.slice(1).split('/') : [path];
  const segments: string[] = [];
  for (const r of raw) {
    const d = decode(r);
    if (d === undefined || d === '' || d === '.' || d === '..' || /[\x00-\x1f\x7f]/.test(d)) safe = false;
    segments.push(d ?? r);
  }
  const normalised: string[] = [];
  for (const r of raw) {
    for (let part of (decode(r) ?? r).toLowerCase().split(/[\\/]/)) {
      const semi = part.indexOf(';');
      if (semi !== -1) part = part.slice(0, semi);
      if (part === '' || part === '.') continue;
      if (part === '..') normalised.pop();
      else normalised.push(part);
    }
  }
  return { safe, segments, segmentsLower: segments.map((x) => x.toLowerCase()), normalised };
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
