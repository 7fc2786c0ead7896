/**
 * clibroker: run vendor CLIs for AI agents through a governing HTTPS interception proxy.
 *
 * The front door, in named groups. Subpath exports:
 * `clibroker/errors`, `clibroker/policy`, `clibroker/cli`.
 */

// The engine
export {
  type AuditEvent,
  type Broker,
  type BrokerOptions,
  type Classification,
  type CredentialStamper,
  createBroker,
  createCertificateAuthority,
  type Decision,
  DEFAULT_LIMITS,
  type Limits,
  loadCertificateAuthority,
  type RequestHead,
  Session,
  type SessionOptions,
  type SyntheticResponse,
  type Tier,
  type TunnelEvent,
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
  type RunResult,
} from './runs/index.js';
export {
  isolationUnavailable,
  runSandboxed,
  SANDBOX_LIMITS,
  type SandboxOptions,
  type SandboxProfile,
  type SandboxResult,
} from './sandbox/index.js';

// The operator configuration and the host that runs its tools (the agent passes {args, stdin?} only)
export {
  canonicalManifestJson,
  type ConfigProblem,
  type ConfiguredTool,
  type ConnectionConfig,
  type LoadedConfig,
  loadConfig,
  manifestSha256,
  type OperatorConfig,
  type SecretRef,
} from './config/index.js';
export {
  type CallOptions,
  createHost,
  type Host,
  type HostOptions,
  type ToolHost,
  type ToolInput,
  type ToolListing,
  type ToolOutput,
} from './host/index.js';

// Manifests
export {
  type CliManifest,
  defineCli,
  defineExtension,
  type ExtensionManifest,
  extensionJsonSchema,
  type ManifestProblem,
  parseExtensionManifest,
} from './manifest/index.js';

// Credentials
export {
  type Connection,
  type CredentialPlan,
  type PreparedCredentials,
  prepareCredentials,
  TokenMinter,
} from './credentials/index.js';

// Conformance: whether a CLI can be governed, tried against the embedded mock vendor
export {
  type ConformanceCheck,
  type ConformanceCode,
  type ConformanceOptions,
  type ConformanceProbe,
  type ConformanceReport,
  conformanceTable,
  knownConformance,
  mockVendor,
  runConformance,
} from './conformance/index.js';

// The durable store
export { type Approval, openSqliteStore, openStore, type Store, type StoreEvent } from './store/index.js';

// Observability
export { EGRESS_CHANNEL, EGRESS_MSG } from './audit/emit.js';
export { CREDENTIAL_HEADERS, createLogger, REDACT_PATHS } from './audit/logger.js';

// Errors
export { BrokerError, CATALOGUE, type ErrorCode, type ErrorSide, isBrokerError } from './errors.js';
