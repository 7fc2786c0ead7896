/**
 * A bounded memo of classify for one override set (a session's). It answers again only for a
 * request whose reading cannot depend on more than its method and its target as sent: no body
 * read, no tighter GraphQL limits, the cache's own override set, and a path no server may
 * route to a GraphQL handler (only that reading looks at headers: a declared body, the
 * content type). The key is the
 * method and the target byte for byte, so two targets that decode or normalise differently
 * never share an entry even where they would classify the same. Refusals (TRACE, a `_method`
 * parameter) are never stored: each is classified, and refused, afresh.
 */
import { classify } from './classify.js';
import { declaresGraphqlPath } from './overrides.js';
import { isGraphqlPath, pathPart } from './target.js';
import type { ClassifyInput, PolicyClassification, WireOverride } from './types.js';

/** Entries kept at most; past it the oldest is dropped. */
export const CLASSIFY_CACHE_ENTRIES = 256;
/** Longer targets are classified every time, so the cache holds at most ~256 × 2 KiB of keys. */
const MAX_TARGET = 2048;
/** Stored for a key whose reading depends on more than the key (a GraphQL path). */
const UNCACHEABLE = 0;

function freeze(c: PolicyClassification): PolicyClassification {
  Object.freeze(c.overridesApplied);
  return Object.freeze(c);
}

/** classify, answered from memory when the same method and target came before. */
export class ClassifyCache {
  readonly #entries = new Map<string, PolicyClassification | typeof UNCACHEABLE>();
  readonly #overrides: readonly WireOverride[];
  readonly #max: number;

  /** `overrides` is the set every cached answer was read with; keep it unchanged (freeze it). */
  constructor(overrides: readonly WireOverride[], max = CLASSIFY_CACHE_ENTRIES) {
    this.#overrides = overrides;
    this.#max = max;
  }

  /** Entries held now (tests). */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The classification of `input`: classify's own answer, the same object for every request
   * answered from memory (frozen: read it, never change it). Throws what classify throws.
   */
  classify(input: ClassifyInput): PolicyClassification {
    if (
      // without overrides the method table and the GraphQL scan are all there is, and the key
      // costs about what classify does (bench/micro/classify.ts)
      this.#overrides.length === 0 ||
      input.body !== undefined ||
      input.limits !== undefined ||
      input.overrides !== this.#overrides ||
      input.target.length > MAX_TARGET
    )
      return classify(input);
    // the method's length first: no method and target pair can spell another's key
    const key = `${input.method.length}:${input.method} ${input.target}`;
    const hit = this.#entries.get(key);
    if (hit === UNCACHEABLE) return classify(input);
    if (hit !== undefined) return hit;
    const out = classify(input);
    const path = pathPart(input.target);
    const keep =
      isGraphqlPath(path) || declaresGraphqlPath(this.#overrides, path) ? UNCACHEABLE : freeze(out);
    if (this.#entries.size >= this.#max) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, keep);
    return out;
  }
}
