/**
 * The operator configuration: everything about a deployment that an agent must never be
 * able to set. An operator (or the host that embeds the library) writes it; the broker
 * daemon or the in-process host reads it; the agent passes only arguments and stdin.
 * The same shape is accepted as a JSON file (`loadConfig(path)`, JSON Schema in
 * schemas/config.schema.json) and as a TypeScript object (`loadConfig(object)`).
 * docs/config.md documents every field with a complete example.
 */
import type { ExtensionManifest } from '../manifest/types.js';
import type { ApprovalContext, Tier } from '../policy/index.js';
import type { SandboxProfile } from '../sandbox/types.js';

/**
 * Where a secret is: an environment variable of the process that loads the configuration
 * (the daemon or the host), or a file only that process's user can read (mode 0600 or 0400,
 * no group or other bits). Never the secret itself: an inline string is refused at load.
 */
export type SecretRef = { env: string } | { file: string };

/** How an installed extension authenticates; every secret field is a reference. */
export type ConnectionConfig =
  | { kind: 'oauth_access_token'; accessToken: SecretRef }
  | { kind: 'api_key'; apiKey: SecretRef }
  | { kind: 'bot_token'; token: SecretRef }
  | { kind: 'basic'; username: string; password: SecretRef }
  | {
      kind: 'oauth_client_credentials';
      clientId: string;
      tenantId?: string;
      /** strict https URL of the token endpoint */
      tokenUrl: string;
      clientSecret: SecretRef;
      scopes?: string[];
    }
  | {
      kind: 'github_app';
      appId: string;
      installationId: string;
      /** the app's private key (PEM) */
      privateKey: SecretRef;
      /** each tier's permission set (GitHub App permission name → read, write or admin) */
      permissions?: {
        read?: Record<string, 'read'>;
        write?: Record<string, 'read' | 'write' | 'admin'>;
      };
      /** repository names (without the owner) every token is narrowed to */
      repositories?: string[];
    };

/** One installed extension, keyed by its manifest's id in `extensions`. */
export interface ExtensionInstall {
  /**
   * A JSON manifest file (a path relative to the configuration file's directory, or
   * absolute), or — for a host passing a TypeScript object — the manifest object itself.
   */
  manifest: string | ExtensionManifest;
  /**
   * sha256 (64 lower-case hex digits) of the reviewed release: of the file's bytes for a
   * path, of `canonicalManifestJson(manifest)` for an object. A mismatch refuses the load.
   */
  sha256: string;
  connection: ConnectionConfig;
  /**
   * The organization's endpoint for this vendor (a GHE host, say): a lower-case DNS name or
   * an https URL on 443. Per extension, because the endpoint receives that extension's
   * credential and no other's.
   */
  endpoint?: string;
  /** whose identity the connection is; a person's linked identity is always read-only. Default `assigned`. */
  identity?: 'assigned' | 'linked';
  /** the assignment whose allow switches (in the store, one per CLI, raised only by `tiers set`) gate writes. Default `default`. */
  assignment?: string;
  /**
   * Per toolkit the manifest declares: `enabled: false` withholds every CLI that toolkit owns
   * (TOOL_VENDOR_CLI_TOOLKIT_DISABLED). A toolkit not listed is enabled; naming one the manifest
   * does not declare refuses the load (CONFIG_FIELD_INVALID).
   */
  toolkits?: Record<string, { enabled: boolean }>;
}

/** A pinned CLI image: the exact program run for every CLI whose `binary.image` names it. */
export interface ImageConfig {
  /** absolute path of a regular file, not writable by group or other */
  executable: string;
  /** sha256 of the file's bytes (64 lower-case hex digits) */
  sha256: string;
  /** `isolated` (bubblewrap; required to hide the daemon's files from the CLI) or `plain` */
  profile: SandboxProfile;
  /** isolated: extra host paths the CLI needs, bound read-only (a CLI installed under /opt) */
  readOnlyPaths?: string[];
  /**
   * `required`: its CLIs are offered only once the store holds a passing conformance verdict
   * for this sha256 (`clibroker conformance --config`); `waived`: offered without one.
   * Default: the configuration's `conformance`.
   */
  conformance?: 'required' | 'waived';
}

/** The broker daemon's listener: who may run tools, and the call settings that come with it. */
export interface DaemonConfig {
  /** absolute path of the unix socket */
  socket: string;
  /** the socket file's mode as an octal string, default "0660"; its group decides who may connect */
  socketMode?: string;
  /** the tier every call through this listener requests (default read); the ceiling and the assignment still cap it */
  cliTier?: Tier;
  /** where the calls run (default agent-step: a person can approve) */
  context?: ApprovalContext;
  /** when set, a client must send `Authorization: Bearer <token>` (compared in constant time) */
  executorToken?: SecretRef;
}

/** `clibroker serve`: the HTTP server's address, its tokens (one per role) and how long a call waits for a person. */
export interface ServeConfig {
  /** the address bound, an IP literal (default 127.0.0.1) */
  host?: string;
  /** default 8787; 0 picks a free port */
  port?: number;
  /**
   * the origin people reach the server at, used in review links (default the bound address);
   * with the bound address, the only Host and Origin the server answers to
   */
  publicUrl?: string;
  /** runs tools over the Platform API (`POST /v1/tools/execute`) */
  executorToken?: SecretRef;
  /** the MCP endpoint `/mcp` */
  mcpToken?: SecretRef;
  /** reviewer name → token: decides approvals, reads them and the audit; cannot run tools */
  reviewers?: Record<string, SecretRef>;
  /** how long a call holds for a person's decision, 1..86 400 (default 600) */
  approvalTimeoutSeconds?: number;
  /** the tier MCP calls request (default `daemon.cliTier`, else read) */
  cliTier?: Tier;
  /** where MCP calls run (default `daemon.context`, else agent-step) */
  context?: ApprovalContext;
  /**
   * The highest tier the Platform API's executor may request (default read): a requested
   * write runs at read, `cliTierReason` `executor-max-tier`.
   */
  executorMaxTier?: Tier;
  /** a review page session not used for this long ends, 1..1440 (default 30) */
  reviewSessionIdleMinutes?: number;
  /** a review page session ends this long after sign-in, 1..168 (default 12) */
  reviewSessionMaxHours?: number;
}

/** The server's tokens as read for one request; a role without a configured token is absent. */
export interface ServeTokens {
  executor?: string;
  mcp?: string;
  /** [name, token] */
  reviewers: [string, string][];
}

/** Operator-level routing of the vendor side (an egress gateway, the embedded mock vendor in tests). */
export interface UpstreamConfig {
  /** `host` → `ip:port` to connect to instead of resolving it; TLS is still verified for `host` */
  connectTo?: Record<string, string>;
  /** a PEM file of CAs trusted for upstream TLS instead of the system's */
  caFile?: string;
  /** CIDR ranges an egress name may resolve to although private/loopback (refused by default) */
  allowAddresses?: string[];
}

/**
 * Where the server pushes a copy of its audit events: an OpenTelemetry collector's OTLP/HTTP
 * logs endpoint (docs/audit.md, "Push to a collector"). The store keeps every event whatever
 * the collector does.
 */
export interface AuditOtlpConfig {
  /** the collector's base URL (`https://collector:4318`); events are POSTed to `{endpoint}/v1/logs` */
  endpoint: string;
  /** header name → where its value is (an API key, a bearer token): read at every POST, never logged */
  headers?: Record<string, SecretRef>;
  /** log records per POST, 1..10 000 (default 512) */
  batchSize?: number;
  /** a batch that is not full is sent after this long, 10..60 000 ms (default 1 000) */
  flushIntervalMs?: number;
  /** events waiting to be sent at most, 1..1 000 000 (default 10 000); beyond it the oldest are dropped */
  maxQueue?: number;
  /** how long one batch is retried before its events are counted failed, 0..3 600 000 ms (default 60 000) */
  retryForMs?: number;
  /** one POST's wait for the collector's answer, 100..120 000 ms (default 10 000) */
  timeoutMs?: number;
}

/** The operator configuration as written (JSON): extensions, connections, images, the ceiling, the daemon. See docs/config.md. */
export interface OperatorConfig {
  $schema?: string;
  version: 1;
  organization: {
    /** the highest tier any call may have */
    ceiling: Tier;
  };
  /** image name → pinned program; `binary.image` of every installed CLI must name one */
  images: Record<string, ImageConfig>;
  /** extension id → its install; the key must equal the manifest's id */
  extensions: Record<string, ExtensionInstall>;
  /**
   * The store: a SQLite file path (absolute, or relative to the configuration's directory),
   * `:memory:`, or a PostgreSQL database whose URL is a secret reference. A string that is a
   * URL (`postgres://…`, `mysql://…`) or another scheme is refused: never a file named after it.
   */
  store:
    | string
    | {
        /** where the URL (`postgres://user:password@host:port/db`) is: never the URL itself */
        postgres: SecretRef;
        /** connections per process, 1..100 (default 10) */
        poolSize?: number;
        /** how long a call waits for an unreachable server, 0..300 seconds (default 10) */
        reconnectWindowSeconds?: number;
      };
  /**
   * How long the store keeps audit events: `days` (1..36 500) after which they are pruned,
   * when the store opens and hourly. A run with an open approval keeps its events; approvals
   * are never pruned. Absent: keep forever.
   */
  storeRetention?: { days: number };
  /** seconds before a call's CLI is killed, 1..270 (default 270) */
  deadlineSeconds?: number;
  /**
   * `required` (the default): every image's CLIs are offered only once the store holds a
   * passing conformance verdict for the image's sha256, unless the image says
   * `conformance: waived`. `optional`: only images that say `conformance: required` are gated.
   */
  conformance?: 'required' | 'optional';
  /**
   * All or nothing: a problem of one CLI (an unknown image, a wrong entrypoint, a tool name
   * another CLI has, credentials every call would refuse) refuses the whole load instead of
   * withholding that CLI, and two CLIs with the same id are not offered under qualified names.
   * Default false.
   */
  strict?: boolean;
  daemon?: DaemonConfig;
  serve?: ServeConfig;
  upstream?: UpstreamConfig;
  /** where a copy of the audit events goes besides the store */
  audit?: { otlp?: AuditOtlpConfig };
}

/** One problem found while loading: where (`extensions.github.sha256`), which code, what to do. */
export interface ConfigProblem {
  path: string;
  code: string;
  message: string;
}

// ── What loadConfig returns: validated, hashed, resolved; nothing half-loaded ─────────

/** A pinned image after the load checked its file. */
export interface PinnedImage {
  name: string;
  executable: string;
  sha256: string;
  profile: SandboxProfile;
  readOnlyPaths: string[];
  /**
   * Whether its CLIs wait for a passing conformance verdict of this sha256: `required`, or
   * `waived` by the operator; absent when the configuration does not ask for one.
   */
  conformance?: 'required' | 'waived';
  /**
   * Before every run: the file is still the one hashed at load (its identity is compared,
   * and it is hashed again when that changed).
   * @throws BrokerError TOOL_VENDOR_CLI_EXECUTABLE_CHANGED
   */
  verify(): Promise<void>;
}

/** An installed extension after the load. */
export interface InstalledExtension {
  id: string;
  manifest: ExtensionManifest;
  sha256: string;
  connection: ConnectionConfig;
  endpoint?: string;
  identity: 'assigned' | 'linked';
  assignment: string;
}

/** A CLI the configuration offers as a tool. */
export interface ConfiguredTool {
  /** `<extension>:cli:<id>` */
  id: string;
  /**
   * `<id>_cli`; `<extension>__<id>_cli` when another installed CLI has the same id (never
   * under `strict`, which refuses that). At most 64 characters of `[a-z0-9_-]`.
   */
  name: string;
  extensionId: string;
  cliId: string;
  /** the agent-facing description (help tree summary and top-level commands) */
  description: string;
  image: PinnedImage;
}

/** A CLI of an installed extension that is not offered, and why. */
export interface WithheldTool {
  id: string;
  name: string;
  /** the reason code: a CONFIG_ code when the loader withheld it, a TOOL_VENDOR_CLI_ code when the host did */
  code: string;
  message: string;
  /** where in the configuration the problem is, when the loader withheld it */
  path?: string;
}

/** An operator configuration loaded and checked: the tools it offers and those it withholds, with why. */
export interface LoadedConfig {
  /** the configuration file, when loaded from one */
  file?: string;
  ceiling: Tier;
  /**
   * The SQLite store's absolute path or `:memory:`; for PostgreSQL a description that never
   * holds the URL (`postgres (URL in env CLIBROKER_STORE_URL)`), the store being `storePostgres`.
   */
  store: string;
  /**
   * The PostgreSQL store, when the configuration names one: where its URL is (read when the
   * store opens: a rotated password takes effect at the next start), the pool's size and the
   * reconnect window. Absent for SQLite.
   */
  storePostgres?: { url: SecretRef; poolSize: number; reconnectWindowMs: number };
  /** `storeRetention.days`: the host opens the store with this retention; absent, it keeps every event */
  storeRetentionDays?: number;
  deadlineMs: number;
  images: ReadonlyMap<string, PinnedImage>;
  extensions: ReadonlyMap<string, InstalledExtension>;
  tools: readonly ConfiguredTool[];
  /** the CLIs the load withheld for a problem of their own (never under `strict`: the load is refused) */
  withheld: readonly WithheldTool[];
  /** the configuration's `strict`: a withheld tool refuses the whole load */
  strict: boolean;
  daemon?: Required<Omit<DaemonConfig, 'executorToken'>> & { executorToken?: SecretRef };
  /** the serve block with its defaults; present whether or not the file has one */
  serve: {
    host: string;
    port: number;
    publicUrl?: string;
    approvalTimeoutMs: number;
    cliTier: Tier;
    context: ApprovalContext;
    /** the highest tier the Platform API's executor may request (default read) */
    executorMaxTier: Tier;
    /** a review page session not used for this long ends */
    reviewSessionIdleMs: number;
    /** a review page session ends this long after sign-in */
    reviewSessionMaxMs: number;
  };
  /**
   * `audit.otlp` with its defaults: the collector the server pushes its audit events to.
   * Absent: nothing is pushed.
   */
  auditOtlp?: Required<Omit<AuditOtlpConfig, 'headers'>> & {
    /** the header names and where their values are */
    headers: Readonly<Record<string, SecretRef>>;
    /**
     * The header values, read now (a rotated file takes effect on the next POST).
     * @throws BrokerError CONFIG_SECRET_UNAVAILABLE
     */
    readHeaders(): Promise<Record<string, string>>;
  };
  upstream?: {
    connectTo: ReadonlyMap<string, { host: string; port: number }>;
    caPem?: string;
    allowAddresses: string[];
  };
  /**
   * Paths the CLI must never see (the configuration file, secret files, the store and its
   * side files, the daemon's socket): masked inside the isolated profile.
   */
  hiddenPaths: readonly string[];
  /**
   * The extension's connection with its secrets read now (so a rotated file or variable
   * takes effect on the next call).
   * @throws BrokerError CONFIG_SECRET_UNAVAILABLE
   */
  connection(extensionId: string): Promise<import('../credentials/types.js').Connection>;
  /** the daemon's executor token, read now; undefined when none is configured */
  executorToken(): Promise<string | undefined>;
  /**
   * The serve block's tokens, read now (a rotated file takes effect on the next request).
   * @throws BrokerError CONFIG_SECRET_UNAVAILABLE
   */
  serveTokens(): Promise<ServeTokens>;
}
