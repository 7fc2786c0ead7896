/**
 * clibroker: run vendor CLIs for AI agents through a governing HTTPS interception proxy.
 *
 * The front door, in named groups: what a host embedding the broker needs, and nothing
 * else (everything not exported here or from a subpath is free to change). Subpath exports:
 * `clibroker/errors` (the error catalogue), `clibroker/policy` (the pure wire policy),
 * `clibroker/cli` (tool definitions, gadgets and the agent-facing CLI), `clibroker/testing`
 * (the embedded mock vendors, a broker routed to one, and a child's environment, for a host's
 * own tests).
 *
 * @module clibroker
 */

// The engine: one listener, a session per call
export type { Session, SessionStats } from './broker/session.js';
export {
  type AbortedBy,
  type AuditEvent,
  type Broker,
  type BrokerOptions,
  type Classification,
  type CredentialStamper,
  createBroker,
  type Decision,
  DEFAULT_LIMITS,
  type Limits,
  type Outcome,
  type RefusalShape,
  type RequestHead,
  type SessionOptions,
  type SyntheticResponse,
  type Tier,
  type TunnelEvent,
  type UpstreamLookup,
  type WireClass,
} from './broker/index.js';

// Runs: an agent's argv in, a governed run of a real CLI out
export {
  createRunner,
  type PendingRequest,
  type RefusedRequest,
  type Runner,
  type RunImage,
  type RunnerOptions,
  type RunInput,
  type ChildOutput,
  type ConnectionSource,
  type RunBase,
  type RunResult,
  type SentRequest,
} from './runs/index.js';
export type { SandboxProfile } from './sandbox/index.js';

// The operator configuration and the host that runs its tools (the agent passes {args, stdin?} only)
export {
  type AuditOtlpConfig,
  canonicalManifestJson,
  type ConfigProblem,
  type ConfiguredTool,
  type ConnectionConfig,
  type DaemonConfig,
  type ExtensionInstall,
  type ImageConfig,
  type InstalledExtension,
  type LoadedConfig,
  type LoadOptions,
  loadConfig,
  manifestSha256,
  type OperatorConfig,
  type PinnedImage,
  type SecretRef,
  type ServeConfig,
  type ServeTokens,
  type UpstreamConfig,
  type WithheldTool,
} from './config/index.js';
export {
  type CallControl,
  type CallOptions,
  createHost,
  type Host,
  type HostOptions,
  type ToolHost,
  type ToolInput,
  type ToolListing,
  type ToolOutput,
} from './host/index.js';

// Manifests: define in code, or validate JSON from elsewhere
export {
  type AuthScheme,
  type CliManifest,
  type CredentialHostsEntry,
  defineCli,
  defineExtension,
  type ExtensionManifest,
  extensionJsonSchema,
  type HelpCommand,
  type HelpTree,
  type ManifestProblem,
  type ManifestReason,
  type ToolkitManifest,
  parseExtensionManifest,
  type WireOverride,
} from './manifest/index.js';

// Credentials: the connection a run stamps, and the minter's options
export type {
  ApiKeyConnection,
  BasicConnection,
  BotTokenConnection,
  Connection,
  ConnectionKind,
  GithubAppConnection,
  GithubPermissionLevel,
  GithubPermissions,
  OAuthAccessTokenConnection,
  OAuthClientCredentialsConnection,
  TokenMinter,
  TokenMinterOptions,
} from './credentials/index.js';

// Conformance: whether a CLI can be governed, tried against the embedded mock vendor
export {
  CONFORMANCE_CODES,
  type ConformanceCheck,
  type ConformanceCode,
  type ConformanceOptions,
  type ConformanceProbe,
  type ConformanceReport,
  conformanceTable,
  type KnownConformance,
  knownConformance,
  type MockVendorName,
  mockVendor,
  runConformance,
} from './conformance/index.js';
export type { VendorHandler, VendorRequest, VendorResponse } from './mockvendor/server.js';

// The durable store
export {
  type Approval,
  type ApprovalQuery,
  type ApprovalStatus,
  type AssignmentKey,
  type CliTierKey,
  type ConformanceVerdict,
  type ConformanceVerdictKind,
  type EgressEvent,
  type ExecutionEvent,
  type EventQuery,
  type NewApproval,
  type NewConformanceVerdict,
  type OpenStoreOptions,
  type PostgresStoreOptions,
  type PruneEvent,
  type PruneInput,
  type PruneResult,
  type ReviewSessionBounds,
  type ReviewSessionRecord,
  openSqliteStore,
  openStore,
  type SetTierInput,
  type SetTierResult,
  type SqliteStoreOptions,
  type Store,
  type StoredEvent,
  type StoreEvent,
  type ThrottleCounter,
  type TierChangeEvent,
} from './store/index.js';

// Observability
export { EGRESS_CHANNEL } from './audit/emit.js';
export { createLogger } from './audit/logger.js';

// Errors (all of the catalogue: `clibroker/errors`)
export { BrokerError, CATALOGUE, type ErrorCode, type ErrorSide, isBrokerError } from './errors.js';
