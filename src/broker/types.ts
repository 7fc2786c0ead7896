/**
 * The engine's public contracts: what a session is opened with, and the hooks the later
 * phases (policy, credentials, approvals) plug into. docs/phases.md describes the phases.
 */
import type { Logger } from 'pino';
import type { AuditEvent } from '../audit/types.js';
import type { Classification, Decision, Tier, WireOverride } from '../policy/types.js';

// The words of other layers the engine speaks, re-exported for the engine's own readers.
export type { AbortedBy, AuditEvent, Outcome } from '../audit/types.js';
export type { Classification, Decision, Tier, WireClass } from '../policy/types.js';

/** Per-session budgets; a session's own limits override the broker's, which override `DEFAULT_LIMITS`. */
export interface Limits {
  /** outbound requests per session (128) */
  maxRequests: number;
  /** request body bytes (8 MiB) */
  maxBodyBytes: number;
  /** session deadline in ms (≤ 270 s) */
  deadlineMs: number;
  /** request head bytes (node's --max-http-header-size for the tunnel parser) */
  maxHeaderBytes: number;
  /** ms a CONNECT may take from our 200 to a finished TLS handshake (10 s) */
  tlsHandshakeTimeoutMs: number;
  /**
   * ms from the first byte of a request head to its last (10 s). A session's own value holds
   * inside its tunnels; the CONNECT head on the proxy listener, read before any session is
   * known, gets the broker's.
   */
  requestHeadTimeoutMs: number;
  /** tunnels (CONNECTs) a session may have open at once (64) */
  maxTunnels: number;
}

/** The budgets a session gets when neither the broker nor the session sets one. */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  maxRequests: 128,
  maxBodyBytes: 8 * 1024 * 1024,
  deadlineMs: 270_000,
  maxHeaderBytes: 32 * 1024,
  tlsHandshakeTimeoutMs: 10_000,
  requestHeadTimeoutMs: 10_000,
  maxTunnels: 64,
});

/** The head of a request as the policy phase sees it: after stripping, before stamping. */
export interface RequestHead {
  method: string;
  host: string;
  /** origin-form request target: path plus query, exactly as sent */
  target: string;
  /** lower-case header names; repeated headers joined with ", " */
  headers: Readonly<Record<string, string>>;
}

/**
 * How the broker writes a refusal's body: its own JSON (`message`, `error: {code, …}`), or
 * OAuth's `{error, error_description}` at a token endpoint, the only body a sign-in library
 * such as MSAL reads there (az crashes on anything else).
 */
export type RefusalShape = 'broker' | 'oauth';

/** A canned answer produced by clibroker itself instead of forwarding (bootstrap token endpoint). */
export interface SyntheticResponse {
  status: number;
  headers: Record<string, string>;
  body: string | Buffer;
  /** set when the answer is a refusal: it is then audited as egress.blocked with these codes */
  refusal?: {
    code: import('../errors.js').ErrorCode;
    policyCode?: import('../errors.js').ErrorCode;
    reason: string;
  };
}

/**
 * Credentials phase hook (src/credentials implements it). The engine has already removed every
 * Authorization header the child sent before calling it.
 */
export interface CredentialStamper {
  /**
   * The Authorization header value to add on a request to `host`, or undefined for none.
   * May mint (and cache) a token; a thrown BrokerError refuses the request with its code.
   */
  authorizationFor(host: string): string | undefined | Promise<string | undefined>;
  /** Answer a request without forwarding it (bootstrap token endpoint), or undefined to go on. */
  intercept?(head: RequestHead): SyntheticResponse | undefined;
  /** Hosts whose requests pass unauthenticated even though they are not in egress (sign-in discovery). */
  readonly extraHosts?: readonly string[];
  /**
   * The shape a refusal of this request is written in: `oauth` at the credential's own token
   * endpoint, which only the credentials know. Absent (or throwing): the broker's own.
   */
  refusalShape?(head: RequestHead): RefusalShape;
}

/** What `broker.openSession` takes: the egress list, tier, credentials and budgets of one call. */
export interface SessionOptions {
  /** exact lower-case DNS names the child may reach */
  egress: readonly string[];
  /** the call's effective tier (resolved once per call) */
  tier?: Tier;
  limits?: Partial<Limits>;
  credentials?: CredentialStamper;
  /**
   * Decide phase override (the runner plugs its approval gate in here). Called after
   * classification with the body when the classifier needed it; returns the decision.
   */
  decide?: (head: RequestHead, cls: Classification, body: Buffer | undefined) => Decision | Promise<Decision>;
  /** wire-policy overrides from the manifest, passed to the classifier as is */
  overrides?: readonly WireOverride[];
  /** mint leaves from a per-session CA name-constrained to the egress hosts */
  nameConstrainedCa?: boolean;
  /** this session's egress events, in order (the runs layer records them per run) */
  onAudit?: (event: AuditEvent) => void;
  /** free-form labels copied into every audit event (run id, tool, …) */
  labels?: Readonly<Record<string, string>>;
}

/**
 * One event per tunnel (CONNECT answered 200), when its socket closes: whether the TLS
 * handshake inside it finished and how many requests it carried. A client that rejects the
 * session CA's leaf shows up here (a failed handshake, or one it dropped at once), never as
 * an audit event: no request was made.
 */
export interface TunnelEvent {
  session: string;
  labels?: Readonly<Record<string, string>>;
  /** the CONNECT host, secret-shaped labels replaced as in the audit event */
  host: string;
  tls: 'established' | 'failed';
  /** the TLS error (capped), when the handshake failed */
  error?: string;
  /** requests the tunnel carried */
  requests: number;
}

/** Every address a name resolves to, as node's `dns.promises.lookup(host, { all: true })` answers. */
export type UpstreamLookup = (host: string) => Promise<readonly { address: string; family: number }[]>;

/** What `createBroker` takes; every field is optional (127.0.0.1, a CA generated in memory). */
export interface BrokerOptions {
  /** a CA to mint leaves from; one is generated in memory when absent */
  ca?: { certPem: string; keyPem: string };
  upstream?: {
    /** extra CA certificates to trust upstream (PEM); the system store otherwise */
    ca?: string | readonly string[];
    /**
     * map a host to where to connect (tests, mock vendors); real DNS otherwise. What it
     * returns passes the same address rule as a DNS answer: routing to 127.0.0.1 needs
     * `allowAddresses: ['127.0.0.0/8']`.
     */
    resolve?: (host: string) => { host: string; port: number } | undefined;
    /**
     * Special-purpose address ranges the broker may connect to anyway, as CIDR
     * (`'127.0.0.0/8'`, `'10.20.0.0/16'`, `'::1/128'`; a bare address is that one address).
     * By default an egress name that resolves to a loopback, link-local (cloud metadata),
     * private, CGNAT, unique-local, unspecified, multicast or other special-purpose address
     * is refused (POLICY_BLOCKED / CLI_EGRESS_ADDRESS_DENIED). A malformed entry makes
     * createBroker throw BROKER_OPTIONS_INVALID naming it (`upstream.allowAddresses[i]`).
     */
    allowAddresses?: readonly string[];
    /** name lookup (tests emulate DNS answers with it); the system resolver otherwise */
    lookup?: UpstreamLookup;
    /** keep-alive connections per origin */
    connections?: number;
  };
  limits?: Partial<Limits>;
  logger?: Logger;
  /** every audit event, in order, as it is written */
  onAudit?: (event: AuditEvent) => void;
  /** every tunnel, when it closes (conformance runs read it; docs/phases.md) */
  onTunnel?: (event: TunnelEvent) => void;
  /** listen port; 0 (default) picks a free one */
  port?: number;
}

export type { Logger };
