/**
 * The policy module's data shapes. Everything here is plain data: the engine builds the
 * inputs from a parsed request head, the policy functions answer with a reason.
 */
import type { Classification, Tier, WireClass } from '../broker/types.js';

export type { Tier, WireClass };

/** The request head as the classifier sees it (after the engine stripped method-override headers). */
export interface ClassifyHead {
  method: string;
  /** origin-form request target: path plus query, exactly as sent */
  target: string;
  /** lower-case header names */
  headers: Readonly<Record<string, string>>;
}

/** One `wirePolicy.overrides` entry; `wireOverrideSchema` validates it. */
export interface WireOverride {
  match: {
    /** exact HTTP method, upper case */
    method?: string;
    /** `/`-separated path; `*` matches exactly one non-empty segment */
    pathPattern?: string;
    /** a GraphQL root field name (not the operation name) */
    graphqlOperation?: string;
  };
  wireClass: WireClass;
}

export interface ClassifyInput extends ClassifyHead {
  /** the whole body, when `needsBody` asked for it; undefined when not buffered */
  body?: Buffer;
  overrides?: readonly WireOverride[];
  /** tighter GraphQL limits than the defaults (bodyCap 8 MiB, maxTokens 1M, maxRootEntries 10k) */
  limits?: Partial<GraphqlLimits>;
}

/** Bounds of the GraphQL classifier; past any of them a document counts as unparsed. */
export interface GraphqlLimits {
  /** body (or query string) bytes read at most */
  bodyCap: number;
  /** tokens per document */
  maxTokens: number;
  /** root selections over all definitions, and fragment-resolution steps */
  maxRootEntries: number;
}

/** The three GraphQL operation types. */
export type GraphqlOperationType = 'query' | 'mutation' | 'subscription';

/** One operation of a GraphQL document that counts toward the class. */
export interface GraphqlOperation {
  type: GraphqlOperationType;
  /** undefined for an anonymous operation */
  name?: string;
  /** root field names (aliases resolved, fragments at the root expanded) */
  rootFields: string[];
  /** index in a JSON batch; 0 otherwise */
  batchIndex: number;
}

/** What the classifier learnt about a GraphQL request. */
export interface GraphqlInfo {
  /** false when any document (or batch element) could not be read: the class is then at least write */
  parsed: boolean;
  /** stable reason when parsed is false (see docs/policy.md) */
  unparsedReason?: string;
  /** the operations that determine the class (the selected one, or all when none is selected) */
  operations: GraphqlOperation[];
  /** the operationName the client sent (first batch element's when a batch) */
  operationName?: string;
  /** the body was a JSON array */
  batch: boolean;
}

/**
 * classify()'s answer. Assignable to the engine's `Classification`; `reason` is a stable
 * string from docs/policy.md, `baseReason` the one before overrides.
 */
export interface PolicyClassification extends Classification {
  class: WireClass;
  reason: string;
  graphql?: GraphqlInfo;
  /** indices into `overrides` of the override that set the class (empty when none did) */
  overridesApplied: number[];
  /** class and reason before overrides */
  baseClass: WireClass;
  baseReason: string;
}
