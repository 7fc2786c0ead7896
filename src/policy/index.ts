/**
 * clibroker/policy: the pure wire policy (DESIGN §4–§5). Plain data in, a decision with a
 * stable reason out; no I/O. docs/policy.md documents every rule and reason string.
 */
export { classify, needsBody } from './classify.js';
export { DEFAULT_BODY_CAP, DEFAULT_GRAPHQL_LIMITS } from './graphql/request.js';
export { classRank, maxClass, methodClass } from './method.js';
export type {
  ClassifyHead,
  ClassifyInput,
  GraphqlInfo,
  GraphqlOperation,
  GraphqlOperationType,
  PolicyClassification,
  Tier,
  WireClass,
  WireOverride,
} from './types.js';
