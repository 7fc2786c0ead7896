/**
 * wirePolicy.overrides. Every override is evaluated. One that raises
 * the class tightens and applies if any GraphQL root field matches; one that lowers it
 * loosens and applies only if every root field matches, only on an unambiguous path, never
 * to a destructive request and never to a GraphQL body that did not parse. The highest
 * tightening wins; loosening applies only when nothing tightened (an override naming the
 * class the request already has counts as "keep" and blocks loosening); among loosening
 * overrides the least loosening wins.
 */
import { classRank } from './method.js';
import { compilePattern, type PathView, segmentsMatch, viewPath } from './path-match.js';
import type { ClassifyInput, PolicyClassification, WireClass, WireOverride } from './types.js';

const CLASSES: ReadonlySet<unknown> = new Set(['read', 'write', 'destructive']);

function optStr(v: unknown): boolean {
  return v === undefined || typeof v === 'string';
}

/** The engine passes overrides as unknown[]; the manifest already refused bad ones, skip any left. */
function wellFormed(o: unknown): o is WireOverride {
  if (typeof o !== 'object' || o === null) return false;
  const { match, wireClass } = o as Partial<WireOverride>;
  if (!CLASSES.has(wireClass) || typeof match !== 'object' || match === null) return false;
  const { method, pathPattern, graphqlOperation } = match;
  if (!optStr(method) || !optStr(pathPattern) || !optStr(graphqlOperation)) return false;
  if (pathPattern !== undefined && !pathPattern.startsWith('/')) return false;
  return method !== undefined || pathPattern !== undefined || graphqlOperation !== undefined;
}

interface Facts {
  method: string;
  methodUpper: string;
  path: PathView;
  /** root fields of the counted operations; undefined when not GraphQL or not parsed */
  rootFields: string[] | undefined;
  /** a GraphQL request whose body did not parse: its root fields are unknown */
  unknownFields: boolean;
}

/** Tightening: match generously (any reading of the path, any root field, unknown fields match). */
function matchesTightening(m: WireOverride['match'], f: Facts): boolean {
  if (m.method !== undefined && m.method !== f.method && m.method.toUpperCase() !== f.methodUpper)
    return false;
  if (m.pathPattern !== undefined) {
    const p = compilePattern(m.pathPattern).lower;
    if (!f.path.readings.some((r) => segmentsMatch(p, r))) return false;
  }
  if (m.graphqlOperation !== undefined) {
    if (f.unknownFields) return true;
    if (f.rootFields === undefined || !f.rootFields.includes(m.graphqlOperation)) return false;
  }
  return true;
}

/** Loosening: match strictly (exact method, safe exact path, every root field). */
function matchesLoosening(m: WireOverride['match'], f: Facts): boolean {
  if (m.method !== undefined && m.method !== f.method) return false;
  if (
    m.pathPattern !== undefined &&
    (!f.path.safe || !segmentsMatch(compilePattern(m.pathPattern).exact, f.path.segments))
  )
    return false;
  if (m.graphqlOperation !== undefined) {
    const fields = f.rootFields;
    if (fields === undefined || fields.length === 0 || !fields.every((x) => x === m.graphqlOperation))
      return false;
  }
  return true;
}

/**
 * Whether an override declares this path a GraphQL endpoint: it names a `graphqlOperation`
 * at a `pathPattern` that matches the path in any reading (monday.com serves GraphQL at `/v2`).
 * Such a path is read as GraphQL even though it has no `graphql` segment, or the override
 * could never see a root field.
 */
export function declaresGraphqlPath(overrides: readonly unknown[] | undefined, path: string): boolean {
  if (overrides === undefined || overrides.length === 0) return false;
  let view: PathView | undefined;
  for (const o of overrides) {
    // most overrides name no root field: skip them before the full shape check
    const m = (o as { match?: { graphqlOperation?: unknown } } | null)?.match;
    if (typeof m !== 'object' || m === null || m.graphqlOperation === undefined) continue;
    if (!wellFormed(o) || o.match.pathPattern === undefined) continue;
    view ??= viewPath(path);
    const p = compilePattern(o.match.pathPattern).lower;
    if (view.readings.some((r) => segmentsMatch(p, r))) return true;
  }
  return false;
}

/** Apply the overrides to a classification in place (class, reason, overridesApplied). */
export function applyOverrides(out: PolicyClassification, input: ClassifyInput, path: string): void {
  const g = out.graphql;
  const facts: Facts = {
    method: input.method,
    methodUpper: input.method.toUpperCase(),
    path: viewPath(path),
    rootFields: g?.parsed ? [...new Set(g.operations.flatMap((o) => o.rootFields))] : undefined,
    unknownFields: g !== undefined && !g.parsed,
  };
  const base = classRank(out.baseClass);
  let tight: { i: number; c: WireClass } | undefined;
  let keep: number | undefined;
  let loose: { i: number; c: WireClass } | undefined;
  const list = input.overrides ?? [];
  for (let i = 0; i < list.length; i++) {
    const o: unknown = list[i];
    if (!wellFormed(o)) continue;
    const rank = classRank(o.wireClass);
    if (rank > base) {
      if (matchesTightening(o.match, facts) && (tight === undefined || rank > classRank(tight.c)))
        tight = { i, c: o.wireClass };
    } else if (rank === base) {
      if (keep === undefined && matchesTightening(o.match, facts)) keep = i;
    } else if (out.baseClass !== 'destructive' && !facts.unknownFields && matchesLoosening(o.match, facts)) {
      if (loose === undefined || rank > classRank(loose.c)) loose = { i, c: o.wireClass };
    }
  }
  if (tight !== undefined) {
    out.class = tight.c;
    out.reason = 'override-tighten';
    out.overridesApplied = [tight.i];
  } else if (keep !== undefined) {
    out.reason = 'override-keep';
    out.overridesApplied = [keep];
  } else if (loose !== undefined) {
    out.class = loose.c;
    out.reason = 'override-loosen';
    out.overridesApplied = [loose.i];
  }
}
