/**
 * "Did you mean" for flags, topics, subcommands and enum values: restricted
 * Damerau–Levenshtein (optimal string alignment, a transposition of neighbours costs 1),
 * accepted when the distance is ≤ 2 and at most 0.4 of the longer string's length, so
 * `ls` never suggests `list` (2/4) but `vendr` suggests `vendor` (1/6).
 */

/** Optimal-string-alignment distance between two strings. */
export function damerauLevenshtein(a: string, b: string): number {
  const m = a.length;
  const n = b.length;
  if (m === 0) return n;
  if (n === 0) return m;
  // Three rolling rows are enough: the transposition looks back two rows.
  let prev2 = new Array<number>(n + 1).fill(0);
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  let cur = new Array<number>(n + 1).fill(0);
  for (let i = 1; i <= m; i++) {
    cur[0] = i;
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, prev2[j - 2]! + 1);
      cur[j] = d;
    }
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prev[n]!;
}

/** A name that may be typed, and the canonical form to suggest when it is the closest. */
export interface Candidate {
  name: string;
  canonical: string;
}

/** A suggestion is made only within distance ≤ 2 and ratio ≤ 0.4 (see the examples above). */
export const MAX_DISTANCE = 2;
export const MAX_RATIO = 0.4;

/**
 * The canonical form of the closest candidate within the limits, or undefined. Ties go to
 * the earlier candidate, so callers list canonical names before aliases.
 */
export function suggest(input: string, candidates: readonly Candidate[]): string | undefined {
  let best: Candidate | undefined;
  let bestD = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    if (Math.abs(c.name.length - input.length) > MAX_DISTANCE) continue;
    const d = damerauLevenshtein(input.toLowerCase(), c.name.toLowerCase());
    if (d > MAX_DISTANCE || d / Math.max(input.length, c.name.length) > MAX_RATIO) continue;
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  return best?.canonical;
}

/** Candidates that are their own canonical form. */
export function plain(names: readonly string[]): Candidate[] {
  return names.map((name) => ({ name, canonical: name }));
}
