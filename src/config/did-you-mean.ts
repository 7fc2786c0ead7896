/**
 * "Did you mean" for configuration keys: the known key closest to a typed one, when it is
 * a case-only difference or within two edits (optimal string alignment: a swap of
 * neighbours is one edit). The CLI's own suggester sits beside the loader in the same
 * layer, which may not import it; this one is the loader's and knows only keys.
 */

/** The known keys at a path of a zod schema: the object's shape there, through wrappers, records, arrays and unions. */
export function knownKeysAt(schema: unknown, path: readonly PropertyKey[]): string[] {
  const keys = new Set<string>();
  const walk = (s: unknown, rest: readonly PropertyKey[], depth: number): void => {
    const def = (s as { _zod?: { def?: Record<string, unknown> } } | undefined)?._zod?.def;
    if (def === undefined || depth > 64) return;
    switch (def['type']) {
      case 'optional':
      case 'nullable':
      case 'default':
      case 'readonly':
      case 'nonoptional':
      case 'catch':
        walk(def['innerType'], rest, depth + 1);
        return;
      case 'pipe':
        walk(def['in'], rest, depth + 1);
        return;
      case 'lazy':
        walk((def['getter'] as () => unknown)(), rest, depth + 1);
        return;
      case 'union':
        for (const o of def['options'] as unknown[]) walk(o, rest, depth + 1);
        return;
      case 'record':
        if (rest.length > 0) walk(def['valueType'], rest.slice(1), depth + 1);
        return;
      case 'array':
        if (rest.length > 0) walk(def['element'], rest.slice(1), depth + 1);
        return;
      case 'object': {
        const shape = def['shape'] as Record<string, unknown>;
        if (rest.length === 0) for (const k of Object.keys(shape)) keys.add(k);
        else if (typeof rest[0] === 'string' && Object.hasOwn(shape, rest[0]))
          walk(shape[rest[0]], rest.slice(1), depth + 1);
        return;
      }
      default:
        return;
    }
  };
  walk(schema, path, 0);
  return [...keys];
}

/** Optimal-string-alignment distance between two strings. */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  return rows[a.length]![b.length]!;
}

/** Keys longer than this are not compared: a typo is a short word, and the distance is quadratic. */
const LONGEST = 64;

/**
 * The known key the operator most likely meant by `typed`: one differing only in case, else
 * the closest within two edits (and fewer edits than either key has characters, so `id` never
 * suggests `ok`); undefined when none is close. Ties go to the earlier key.
 */
export function closestKey(typed: string, known: readonly string[]): string | undefined {
  if (typed.length > LONGEST) return undefined;
  const folded = known.find((k) => k !== typed && k.toLowerCase() === typed.toLowerCase());
  if (folded !== undefined) return folded;
  let best: string | undefined;
  let bestD = 3;
  for (const k of known) {
    if (k === typed || Math.abs(k.length - typed.length) > 2) continue;
    const d = editDistance(typed.toLowerCase(), k.toLowerCase());
    if (d < bestD && d < Math.min(k.length, typed.length)) {
      best = k;
      bestD = d;
    }
  }
  return best;
}
