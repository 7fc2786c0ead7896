/**
 * clibroker: run vendor CLIs for AI agents through a governing HTTPS interception proxy.
 *
 * The front door (STYLE: hono's src/index.ts). Subpath exports: `clibroker/errors`,
 * `clibroker/policy`, `clibroker/cli`.
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
  type WireClass,
} from './broker/index.js';

// Observability
export { EGRESS_CHANNEL, EGRESS_MSG } from './audit/emit.js';

// Errors
export { BrokerError, CATALOGUE, type ErrorCode, type ErrorSide, isBrokerError } from './errors.js';
