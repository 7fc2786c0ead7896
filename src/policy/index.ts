/**
 * clibroker/policy: the pure wire policy. Plain data in, a decision with a
 * stable reason out; no I/O. docs/policy.md documents every rule and reason string.
 *
 * @module clibroker/policy
 */

// classify phase
export { classify, needsBody } from './classify.js';
export { DEFAULT_BODY_CAP, DEFAULT_GRAPHQL_LIMITS } from './graphql-request.js';
export {
  DEFAULT_SCAN_LIMITS,
  type ScanLimits,
  type ScannedOperation,
  type ScanResult,
  scanDocument,
} from './graphql/scan.js';
export { classRank, maxClass, methodClass } from './method.js';
// overrides
export {
  pathPatternProblem,
  type WireOverrideInput,
  type WireOverrideSchema,
  wireOverrideSchema,
} from './override-schema.js';
// tiers, decisions, digests
export {
  type CredentialKind,
  isTokenCredentialKind,
  resolveTier,
  TOKEN_CREDENTIAL_KINDS,
  type TierInput,
  type TierReason,
  type TierResolution,
  TIER_SOURCES,
  type TierSource,
} from './tier.js';
export {
  type ApprovalContext,
  type DecideInput,
  decide,
  type PolicyDecision,
  toEngineDecision,
} from './decide.js';
export { canonicalHost, DIGEST_TAG, requestDigest } from './digest.js';
export { BODY_PREVIEW_LIMIT, type RefusalContext, refusalMessage } from './messages.js';
export type {
  Classification,
  ClassifyHead,
  ClassifyInput,
  Decision,
  GraphqlInfo,
  GraphqlLimits,
  GraphqlOperation,
  GraphqlOperationType,
  PolicyClassification,
  Tier,
  WireClass,
  WireOverride,
} from './types.js';
