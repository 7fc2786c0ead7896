/**
 * The codes of clibroker's one error catalogue, as data: every code with the HTTP status the
 * child sees (where it sees one), the side that caused it, whether retrying the same thing can
 * succeed, its summary and its remedy. Codes are never renamed or reused
 * (`tests/errors/codes.snapshot.txt` lists every code ever shipped).
 *
 * Plain data that imports nothing: the words of each message (`error-messages.ts`) are typed
 * against it, and `errors.ts` renders both, so the three files import one way.
 */

/** Who caused the failure (pingora's `esource`). */
export type ErrorSide =
  /** the vendor CLI running in the sandbox sent something we refuse */
  | 'child'
  /** the caller (agent, host platform) passed bad input */
  | 'caller'
  /** policy refused it: tier, egress, approvals */
  | 'policy'
  /** the extension or CLI manifest is wrong */
  | 'manifest'
  /** the vendor's server or the network to it */
  | 'upstream'
  /** a credential provider (token endpoint) */
  | 'credential'
  /** clibroker itself */
  | 'broker';

/** One catalogue entry: the status the child sees, who caused it, whether a retry can succeed, and the words. */
export interface ErrorSpec {
  /** HTTP status when the child sees the failure as a response; undefined otherwise. */
  readonly status?: number;
  readonly side: ErrorSide;
  /** whether the same call can succeed if simply retried */
  readonly retry: boolean;
  /** one line: what happened, for docs and default messages */
  readonly summary: string;
  /** what would allow the request / fix the input (goes into refusal messages) */
  readonly remedy?: string;
}

function spec<K extends string>(t: Record<K, ErrorSpec>): Readonly<Record<K, ErrorSpec>> {
  return t;
}

/** Every error code clibroker throws, with its spec; docs/errors.md is generated from it. */
export const CATALOGUE = spec({
  // ── Policy decisions the child sees as HTTP refusals ────────────────
  POLICY_BLOCKED: {
    status: 422,
    side: 'policy',
    retry: false,
    summary: 'The request was refused by policy; details.policyCode says which rule.',
  },
  CLI_REQUEST_TIER_DENIED: {
    status: 422,
    side: 'policy',
    retry: false,
    summary: "The request's class (write or destructive) is above the call's effective tier.",
    remedy:
      "The message names what capped the tier (details.cliTierReason) and who can raise it; the command's arguments cannot. Carry on with reads, or ask that person.",
  },
  CLI_EGRESS_HOST_DENIED: {
    status: 422,
    side: 'policy',
    retry: false,
    summary: "The host is not in the extension's egress list.",
    remedy: "Add the host to the extension's egress list, or do not contact it.",
  },
  CLI_UPLOAD_TOO_LARGE: {
    status: 413,
    side: 'child',
    retry: false,
    summary: 'The request body is larger than the per-request cap (8 MiB by default).',
    remedy: 'Send a smaller body.',
  },
  CLI_REQUEST_BUDGET_EXCEEDED: {
    status: 429,
    side: 'child',
    retry: false,
    summary: 'The call has used its budget of outbound requests (128 by default).',
    remedy: 'Split the work over several calls.',
  },
  CLI_UPGRADE_REFUSED: {
    status: 403,
    side: 'child',
    retry: false,
    summary: 'Connection upgrades (WebSocket, h2c) cannot be governed and are refused.',
    remedy: 'Use a command that speaks plain HTTPS request/response.',
  },
  CLI_HTTP2_ONLY: {
    side: 'child',
    retry: false,
    summary:
      'The client offered only HTTP/2 in ALPN; the broker speaks HTTP/1.1 inside the tunnel. The TLS handshake fails with no_application_protocol.',
    remedy: 'Let the client fall back to HTTP/1.1 (curl --http1.1; gh and curl do by default).',
  },
  CLI_PORT_REFUSED: {
    status: 403,
    side: 'child',
    retry: false,
    summary: 'Only port 443 can be tunnelled.',
    remedy: 'Use the vendor API on port 443.',
  },
  CLI_HOST_INVALID: {
    status: 400,
    side: 'child',
    retry: false,
    summary: 'The CONNECT target is not a DNS host name (IP literal, malformed or empty).',
    remedy: 'Address vendor APIs by their DNS name.',
  },
  CLI_PLAIN_HTTP_REFUSED: {
    status: 403,
    side: 'child',
    retry: false,
    summary: 'Plain-HTTP (absolute-form) proxying is refused; only HTTPS through CONNECT is governed.',
    remedy: 'Use an https:// URL.',
  },
  CLI_REQUEST_SIGNING_UNSUPPORTED: {
    status: 422,
    side: 'child',
    retry: false,
    summary:
      'The request is signed by the client (AWS SigV4 style); the broker cannot stamp or govern signed requests.',
    remedy: 'Use a CLI that authenticates with a bearer/token credential.',
  },
  CLI_CLIENT_CERT_UNSUPPORTED: {
    status: 422,
    side: 'child',
    retry: false,
    summary:
      'Client-certificate (mTLS) authentication cannot be brokered; the broker never presents one upstream.',
  },
  CLI_TRACE_REFUSED: {
    status: 405,
    side: 'child',
    retry: false,
    summary:
      'TRACE (and TRACK) are refused: the origin reflects the request back, stamped credential included.',
    remedy: 'Use another method; nothing a vendor CLI needs is done with TRACE.',
  },
  CLI_METHOD_OVERRIDE_REFUSED: {
    status: 422,
    side: 'child',
    retry: false,
    summary:
      'The request carries a _method override (query parameter or urlencoded form field) that servers may honour as another method; it cannot be classified as the method it claims.',
    remedy: 'Send the request with the real HTTP method instead of a _method override.',
  },
  CLI_TLS_HANDSHAKE_TIMEOUT: {
    side: 'child',
    retry: true,
    summary:
      'The client opened a tunnel but did not finish the TLS handshake in time; the tunnel was closed.',
  },
  CLI_REQUEST_HEAD_TIMEOUT: {
    status: 408,
    side: 'child',
    retry: true,
    summary: 'The request head (request line and headers) did not arrive in time; the connection was closed.',
  },
  CLI_TUNNEL_LIMIT_EXCEEDED: {
    status: 429,
    side: 'child',
    retry: false,
    summary: 'The session already has the most tunnels (CONNECTs) open that it may have at once.',
    remedy: 'Reuse keep-alive connections or close idle ones.',
  },
  CLI_EGRESS_ADDRESS_DENIED: {
    status: 422,
    side: 'policy',
    retry: false,
    summary:
      'The egress host resolves to a loopback, link-local (cloud metadata included), private, CGNAT, unique-local, unspecified or other special-purpose address (multicast, broadcast, documentation, …), which the operator has not allowed. Raised as POLICY_BLOCKED with this policyCode; details.range names the range.',
    remedy:
      "Point the name at a public address, or have the operator allow that address range (the broker's upstream.allowAddresses).",
  },
  CLI_TUNNEL_CONNECT_REFUSED: {
    status: 405,
    side: 'child',
    retry: false,
    summary: 'A CONNECT request inside an intercepted tunnel is refused.',
  },
  CLI_HOST_MISMATCH: {
    status: 400,
    side: 'child',
    retry: false,
    summary: 'The TLS SNI or the request Host header does not match the CONNECT target.',
  },
  CLI_BAD_REQUEST: {
    status: 400,
    side: 'child',
    retry: false,
    summary:
      'The request could not be parsed as HTTP/1.1 (malformed line, bad header, Content-Length with Transfer-Encoding, …).',
  },
  CLI_HEADERS_TOO_LARGE: {
    status: 431,
    side: 'child',
    retry: false,
    summary: 'The request head is larger than the header limit.',
  },
  CLI_PROXY_AUTH_REQUIRED: {
    status: 407,
    side: 'child',
    retry: false,
    summary: 'The proxy connection carried no valid session credentials.',
  },
  CLI_SESSION_CLOSED: {
    status: 410,
    side: 'broker',
    retry: false,
    summary: "The session's deadline passed or it was closed; no more requests are forwarded.",
  },
  UPSTREAM_UNAVAILABLE: {
    status: 502,
    side: 'upstream',
    retry: true,
    summary: 'The vendor host could not be reached, or the TLS handshake with it failed.',
  },
  UPSTREAM_TIMEOUT: {
    status: 504,
    side: 'upstream',
    retry: true,
    summary: 'The vendor host did not answer in time.',
  },

  // ── Approvals ─────────────────────────────────────────────────────────
  CLI_APPROVAL_PENDING: {
    status: 422,
    side: 'policy',
    retry: false,
    summary: 'A destructive request needs a person to approve that exact request; the run paused.',
    remedy: 'Ask the person to approve the pending request; the command then re-runs once.',
  },
  CLI_CONFIRMATION_REQUIRED: {
    status: 422,
    side: 'policy',
    retry: false,
    summary:
      'A destructive request needs approval, and this context (chat, API, tool block, schedule) has no person to ask.',
  },
  CLI_CONFIRMATION_NOT_APPROVABLE: {
    status: 422,
    side: 'policy',
    retry: false,
    summary: "A destructive request needs approval, and this agent step's plan never asks a person.",
  },
  CLI_CONFIRMATION_UNREVIEWABLE: {
    status: 422,
    side: 'policy',
    retry: false,
    summary:
      'A destructive request needs approval, but it cannot be shown to a reviewer whole: its body (binary, compressed or too large) or its target (too long, not a plain path and query, or a parameter name that looks like a secret).',
  },
  CLI_CONFIRMATION_AFTER_WRITE: {
    status: 422,
    side: 'policy',
    retry: false,
    summary:
      'A destructive request needs approval, but a write was already sent in the same command; re-running it would repeat that write.',
  },
  EXEC_ACTION_CONFIRMATION_DECLINED: {
    side: 'policy',
    retry: false,
    summary: 'The person rejected the pending request.',
  },

  // ── The durable store: tiers, approvals, audit ─────────────
  APPROVAL_NOT_FOUND: {
    side: 'caller',
    retry: false,
    summary: 'No approval has that id.',
  },
  APPROVAL_NOT_PENDING: {
    side: 'caller',
    retry: false,
    summary:
      'The approval was already decided; only a pending approval can be approved or rejected, so a rejected one can never be approved.',
  },
  STORE_INPUT_INVALID: {
    side: 'caller',
    retry: false,
    summary:
      'A value given to the store is malformed (digest not hex, unknown tier or event type, unparsable time, bad limit).',
  },
  STORE_WRITE_FAILED: {
    side: 'broker',
    retry: true,
    summary:
      'The store could not write; the whole transaction was rolled back, so nothing changed (a tier stays as it was).',
  },
  STORE_SCHEMA_UNSUPPORTED: {
    side: 'broker',
    retry: false,
    summary:
      'The database holds migrations this build does not know (newer, or edited after they were applied); it is left untouched.',
    remedy: 'Open it with the clibroker version that created it, or a newer one.',
  },
  STORE_CLOSED: {
    side: 'broker',
    retry: false,
    summary: 'The store was used after close().',
  },
  STORE_UNAVAILABLE: {
    side: 'broker',
    retry: true,
    summary:
      'The store database could not be reached, or the connection broke while a call was in flight; that call was not acknowledged (an event it carried is not in the trail unless it committed before the break).',
    remedy: 'Check that the database is up and reachable; the store reconnects by itself with backoff.',
  },
  STORE_SCHEMA_OUTDATED: {
    side: 'broker',
    retry: false,
    summary:
      'The server database is at an older schema version than this build (or was never migrated); a shared database is migrated only on purpose.',
    remedy: 'Run clibroker store migrate --config <file> (or --store <url>) once, then start the brokers.',
  },

  // ── Calls, manifests, credentials ────────────────────────────────────────────────
  INVALID_TOOL_INPUT: {
    side: 'caller',
    retry: false,
    summary: 'The tool arguments are invalid (for example they carry cliTier or approvedRequestDigests).',
  },
  MANIFEST_INVALID: {
    side: 'manifest',
    retry: false,
    summary: 'The extension or CLI manifest was refused; details.problems lists every problem.',
  },
  IDENTITY_NOT_CONFIGURED: {
    side: 'manifest',
    retry: false,
    summary:
      'A credentialHosts entry has scopes but the connection is not an application identity (client credentials).',
  },
  TOOL_VENDOR_CLI_CREDENTIAL_HOSTS_REQUIRED: {
    side: 'manifest',
    retry: false,
    summary:
      'The extension has several egress hosts, no credentialHosts and no organization endpoint: nothing says where the credential goes.',
  },
  TOOL_VENDOR_CLI_NOT_DECLARED: {
    side: 'caller',
    retry: false,
    summary: 'The CLI id is not declared by the extension.',
  },
  TOOL_VENDOR_CLI_CREDENTIAL_UNBOUND: {
    side: 'manifest',
    retry: false,
    summary: "The connection's credential binds to none of the CLI's hosts.",
  },
  TOOL_VENDOR_CLI_NOT_OFFERED: {
    side: 'caller',
    retry: false,
    summary:
      'No offered tool has that name or id (the configuration does not install it, or withholds it); details.tools lists the offered ones.',
  },
  TOOL_VENDOR_CLI_EXECUTABLE_CHANGED: {
    side: 'broker',
    retry: false,
    summary: "The pinned executable's file no longer has the sha256 the configuration pins; nothing was run.",
    remedy: 'The operator reviews the new binary and pins its sha256 in the configuration.',
  },
  TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE: {
    side: 'broker',
    retry: false,
    summary:
      "The image's isolated profile cannot run on this host (bubblewrap missing or refused); a configured image never falls back to plain.",
    remedy:
      'Install bubblewrap (Debian package bubblewrap) and allow unprivileged user namespaces, or pin the image with profile plain.',
  },
  TOOL_VENDOR_CLI_CONFORMANCE_UNVERIFIED: {
    side: 'broker',
    retry: false,
    summary:
      'No passing conformance verdict is recorded in the store for the pinned executable (its sha256), so its CLI is not offered.',
    remedy:
      'The operator runs `clibroker conformance --config <file>` to record a verdict for the pinned binary, or waives the check for that image in the configuration (conformance: "waived").',
  },
  TOOL_VENDOR_CLI_CONFORMANCE_FAILED: {
    side: 'broker',
    retry: false,
    summary:
      'The conformance verdict recorded for the pinned executable (its sha256) is a failure, so its CLI is not offered; details name the CONFORMANCE_* reason.',
    remedy:
      'Pin a release of the CLI that passes conformance, or waive the check for that image in the configuration (conformance: "waived") after reviewing the reason.',
  },
  TOOL_VENDOR_CLI_PLAIN_NOT_ALLOWED: {
    side: 'broker',
    retry: false,
    summary:
      'The image has profile plain and the in-process host was not started with allowPlainProfile: true, so its CLI is not offered (a plain CLI reads every file the host process can).',
    remedy:
      'Give the image profile isolated, or, when every caller of this host is trusted, start it with createHost(config, { allowPlainProfile: true }).',
  },
  TOOL_VENDOR_CLI_TOOLKIT_DISABLED: {
    side: 'broker',
    retry: false,
    summary: "The CLI's toolkit is disabled in the configuration, so the CLI is not offered.",
    remedy: "The operator enables the toolkit in the extension's configuration.",
  },
  CREDENTIAL_TOKEN_MINT_FAILED: {
    status: 401,
    side: 'credential',
    retry: true,
    summary:
      'Minting an OAuth token for the bound scopes failed; details carry the provider error, never the secret.',
  },
  CLI_TIMEOUT: {
    side: 'broker',
    retry: true,
    summary: 'The CLI did not finish before the call deadline (270 s at most) and was killed.',
  },
  CLI_EXITED_BY_SIGNAL: {
    side: 'child',
    retry: true,
    summary:
      'The CLI was ended by a signal (killed, crashed) instead of exiting; the call failed. details carry the signal.',
  },
  CLI_SPAWN_FAILED: {
    side: 'broker',
    retry: false,
    summary: 'The CLI could not be started (entrypoint missing or not executable).',
  },
  CLI_PREAMBLE_FAILED: {
    side: 'broker',
    retry: false,
    summary:
      'The bootstrap preamble (run before the command in the same sandbox) exited non-zero; the command did not run. details carry its exit code, never its output.',
  },
  HELP_CRAWL_FAILED: {
    side: 'child',
    retry: false,
    summary:
      "The CLI's top-level help could not be read (it did not start, timed out, or printed nothing); no tree was made. details say which.",
  },
  HELP_CRAWL_NOT_ISOLATED: {
    side: 'broker',
    retry: false,
    summary:
      'A help crawl needs the isolated profile (no network of its own) and it cannot run here; details carry why.',
    remedy: 'Install bubblewrap, or allow a crawl in the plain profile explicitly (allowPlain).',
  },
  INTERNAL_ERROR: {
    status: 500,
    side: 'broker',
    retry: false,
    summary: 'An unexpected failure inside clibroker.',
  },

  // ── The operator configuration and the broker daemon ──────────────────────────
  CONFIG_INVALID: {
    side: 'manifest',
    retry: false,
    summary:
      'The operator configuration was refused; details.problems lists every problem with its path. Nothing was loaded.',
  },
  CONFIG_SECRET_UNAVAILABLE: {
    side: 'broker',
    retry: false,
    summary:
      'A secret the configuration references (an environment variable or a file) is missing, empty or readable by others; nothing was run.',
    remedy:
      'The operator sets the variable for the daemon, or writes the file with mode 0600 owned by the daemon user.',
  },
  DAEMON_UNAVAILABLE: {
    side: 'broker',
    retry: true,
    summary:
      "The broker daemon's socket could not be reached (not running, wrong path, or no permission); nothing was run.",
    remedy:
      'Ask the operator to start `clibroker daemon --config <file>`, or set CLIBROKER_SOCKET to its socket.',
  },
  DAEMON_UNAUTHORIZED: {
    side: 'caller',
    retry: false,
    summary: 'The daemon requires an executor token and none, or a wrong one, was sent; nothing was run.',
    remedy: 'Set CLIBROKER_EXECUTOR_TOKEN (or --token-file) to the token the operator issued.',
  },
  DAEMON_PROTOCOL_ERROR: {
    side: 'caller',
    retry: false,
    summary:
      'The request to the daemon was not valid (malformed JSON, unknown route, body over the cap, or a field the daemon sets itself).',
  },
  DAEMON_SOCKET_IN_USE: {
    side: 'broker',
    retry: false,
    summary:
      "The daemon's socket path is taken: another process is listening on it, or it is a file that is not a socket; the daemon did not start.",
    remedy:
      'Stop the other daemon, or give this one another daemon.socket; a stale socket (nothing listening) is replaced by itself.',
  },
  DAEMON_NO_ANSWER: {
    side: 'broker',
    retry: false,
    summary:
      'The daemon took the request but gave no valid answer (the connection ended early, or the reply was not its protocol); the command may have run.',
    remedy: 'Check the daemon log for the call before running the command again.',
  },
  DAEMON_SOCKET_DIR_UNSAFE: {
    side: 'broker',
    retry: false,
    summary:
      "The daemon's socket lies in a directory (or below one) that a user other than the daemon's and root can write, so another user could swap the socket for an impostor; the daemon did not start, or the client did not connect.",
    remedy:
      'Put the socket in a directory owned by the daemon user, group agents, mode 2750 (install -d -o clibroker -g agents -m 2750 /run/clibroker), under parents only root can write.',
  },
  DEPLOYMENT_UNSAFE: {
    side: 'broker',
    retry: false,
    summary:
      '`clibroker doctor` found the deployment unsafe; details.problems lists every problem with its code and path.',
    remedy: 'Fix every problem listed, then run `clibroker doctor --config <file>` again.',
  },

  // ── clibroker serve: the HTTP server's own refusals ──
  SERVE_UNAUTHORIZED: {
    side: 'caller',
    retry: false,
    summary:
      'No bearer token, or one that is not the token of this endpoint (executor for the Platform API, a reviewer for approvals, the MCP token for /mcp); nothing was run or decided.',
    remedy:
      "Send Authorization: Bearer <token> with the token the operator configured for the endpoint's role (serve.executorToken, serve.reviewers, serve.mcpToken).",
  },
  SERVE_FORBIDDEN: {
    side: 'caller',
    retry: false,
    summary:
      "The token is valid but its role may not do this (a reviewer's token cannot run tools; an executor's cannot decide approvals); nothing was run or decided.",
  },
  SERVE_PROTOCOL_ERROR: {
    side: 'caller',
    retry: false,
    summary:
      'The request was not valid: malformed JSON or JSON-RPC, an unknown route or method, a body over the cap, or a field the body may not have; nothing was run.',
  },
  SERVE_APPROVAL_TIMEOUT: {
    side: 'policy',
    retry: false,
    summary:
      'No person decided the approval within the approval timeout: the approval expired (it can never be approved) and the request was not sent.',
    remedy:
      'Ask a reviewer to watch the review page and call the tool again, or ask the operator for a longer serve.approvalTimeoutSeconds.',
  },
  SERVE_STOPPED: {
    side: 'broker',
    retry: true,
    summary:
      'The server stopped while the call waited for a person; the approval is still pending in the store, and the request was not sent.',
    remedy: 'Call the tool again once the server is back, or resume the approval after a person approved it.',
  },
  SERVE_APPROVAL_HELD: {
    side: 'caller',
    retry: true,
    summary:
      'A call on one of the servers is still waiting for this approval: it runs once the approval is decided, so there is nothing to resume.',
    remedy:
      'Let the waiting call finish; resume only once no call waits (details.heldUntil says until when the waiting server holds it, unless it renews).',
  },
  SERVE_CALL_CANCELLED: {
    side: 'caller',
    retry: false,
    summary:
      'The client cancelled the call: its wait for a person ended, or its CLI was killed; what the CLI already sent is in the audit trail.',
  },
  SERVE_RATE_LIMITED: {
    status: 429,
    side: 'caller',
    retry: true,
    summary:
      'Too many failed sign-ins or wrong tokens came from this address (or from all addresses together) in a short time; the request was refused without its token being checked, and nothing was run or decided.',
    remedy:
      'Wait the seconds the Retry-After header (and details.retryAfterSeconds) names, then send the right token; every further failure doubles the wait, up to a cap.',
  },

  // ── Conformance verdicts: the reason a CLI is refused (clibroker conformance) ──
  CONFORMANCE_INTERACTIVE: {
    side: 'manifest',
    retry: false,
    summary:
      'The CLI did not finish with stdin closed and no TTY: it waits for a prompt, a pager or a browser sign-in.',
    remedy:
      'Declare commands and flags that never prompt (--yes, --no-input, --no-pager), or set the variable that turns prompts off in the manifest env.',
  },
  CONFORMANCE_PROXY_IGNORED: {
    side: 'manifest',
    retry: false,
    summary:
      "Not one request of the CLI reached the broker: it ignores HTTPS_PROXY (Node's built-in fetch does, so do clients with their own dialer).",
    remedy:
      "Use an HTTP client that honours HTTPS_PROXY (an explicit proxy agent for Node fetch, or a CLI option naming the proxy), or set the CLI's own proxy variable in the manifest env.",
  },
  CONFORMANCE_CA_NOT_TRUSTED: {
    side: 'manifest',
    retry: false,
    summary:
      'The CLI refused the leaf minted from the session CA: it pins certificates or trusts a CA list of its own instead of SSL_CERT_FILE / NODE_EXTRA_CA_CERTS.',
    remedy:
      "Turn pinning off for the vendor hosts, or point the CLI's own CA setting at the session CA file through the manifest env.",
  },
  CONFORMANCE_HTTP2_ONLY: {
    side: 'manifest',
    retry: false,
    summary: 'The CLI offered only HTTP/2 in the TLS handshake; clibroker speaks HTTP/1.1 inside the tunnel.',
    remedy:
      'Let the client offer http/1.1 too (most HTTP libraries fall back by default; curl has --http1.1).',
  },
  CONFORMANCE_PLAIN_HTTP: {
    side: 'manifest',
    retry: false,
    summary: 'The CLI sent a plain-HTTP request through the proxy; only HTTPS is governed.',
    remedy: 'Use the vendor API over https://.',
  },
  CONFORMANCE_NON_443: {
    side: 'manifest',
    retry: false,
    summary: 'The CLI tried to tunnel to a port other than 443.',
    remedy: 'Use the vendor API on port 443 (drop custom ports from the endpoint the CLI is given).',
  },
  CONFORMANCE_WEBSOCKET: {
    side: 'manifest',
    retry: false,
    summary: 'The CLI asked to upgrade a connection (WebSocket); upgraded connections cannot be governed.',
    remedy: 'Declare commands that use plain request/response calls (polling instead of streaming).',
  },
  CONFORMANCE_REQUEST_SIGNING: {
    side: 'manifest',
    retry: false,
    summary:
      'The CLI signs its requests itself (AWS SigV4 style); clibroker cannot stamp or govern signed requests.',
    remedy: 'Use a CLI or an auth mode that sends a bearer or token credential.',
  },
  CONFORMANCE_CREDENTIAL_NOT_FROM_ENV: {
    side: 'manifest',
    retry: false,
    summary:
      "The CLI did not take its credential from the declared variable or the sign-in bootstrap: it wanted a stored sign-in (a credentials file), a placeholder reached the vendor, or the vendor did not get the platform's credential.",
    remedy:
      'Declare the variable the CLI reads its token from in credentialEnv, or a bootstrap preamble for its sign-in; never rely on a credentials file.',
  },
  CONFORMANCE_CLASSIFICATION: {
    side: 'manifest',
    retry: false,
    summary:
      'The declared read command sent a request not classified read, or the declared write command sent none classified write (or a destructive one).',
    remedy:
      'Declare commands that do what they say, or add wire-policy overrides for the vendor endpoints the classifier gets wrong.',
  },
  CONFORMANCE_PROBE_FAILED: {
    side: 'manifest',
    retry: false,
    summary:
      'A declared command could not start, or did not complete with exit code 0 against the embedded vendor, for a reason no earlier check names.',
    remedy:
      "Read the check's evidence (the refusal code or the CLI's own error) and fix the manifest or the declared command.",
  },
  // ── Installing and embedding: the optional driver, options checked where they enter ──
  STORE_DRIVER_MISSING: {
    side: 'caller',
    retry: false,
    summary:
      'The embedded SQLite store needs better-sqlite3, an optional peer dependency (native code) that is not installed here, or was installed without building its native part.',
    remedy:
      'Run npm install better-sqlite3 next to clibroker (npm rebuild better-sqlite3 if it was installed with scripts skipped; with npx: npx -p clibroker -p better-sqlite3 clibroker …), or open a PostgreSQL store.',
  },
  DEPENDENCY_MISSING: {
    side: 'caller',
    retry: false,
    summary:
      'A feature was used whose package is an optional peer dependency of clibroker and is not installed next to it (pg, for a PostgreSQL store).',
    remedy:
      'Install the package the message names next to clibroker (npm install <package>; with npx: npx -p clibroker -p <package> clibroker …).',
  },
  BROKER_OPTIONS_INVALID: {
    side: 'caller',
    retry: false,
    summary:
      'An option given to createBroker is malformed or out of range; details.path names it and details.reason says why.',
  },
  SESSION_OPTIONS_INVALID: {
    side: 'caller',
    retry: false,
    summary:
      'An option given to openSession is malformed or out of range (an egress entry that is not an exact DNS name, an unknown tier, a limit above its ceiling); details.path names it.',
  },
  RUNNER_OPTIONS_INVALID: {
    side: 'caller',
    retry: false,
    summary:
      'An option given to createRunner is malformed or out of range; details.path names it and details.reason says why.',
  },
  RUN_INPUT_INVALID: {
    side: 'caller',
    retry: false,
    summary:
      'The input given to runner.run is malformed or out of range (an unknown tier, a deadline above 270 s, a budget that is not a positive integer); details.path names the field.',
  },
  // ── Configuration refusals: reason codes inside CONFIG_INVALID's details.problems ──
  CONFIG_FIELD_UNKNOWN: {
    side: 'manifest',
    retry: false,
    summary: 'A field the configuration schema does not define (usually a typo).',
  },
  CONFIG_FIELD_INVALID: {
    side: 'manifest',
    retry: false,
    summary: 'A configuration field has the wrong type, is missing, or is outside its allowed form.',
  },
  CONFIG_SECRET_INLINE: {
    side: 'manifest',
    retry: false,
    summary:
      'A secret field holds the secret itself; secrets are referenced ({"env": NAME} or {"file": PATH}), never written in the configuration.',
  },
  CONFIG_SECRET_MISSING: {
    side: 'manifest',
    retry: false,
    summary:
      'A referenced secret does not exist: the environment variable is unset or empty, or the file is missing.',
  },
  CONFIG_SECRET_FILE_MODE: {
    side: 'manifest',
    retry: false,
    summary:
      'A secret file is readable or writable by group or other; it must be readable by its owner only (0600 or 0400).',
  },
  CONFIG_MANIFEST_UNREADABLE: {
    side: 'manifest',
    retry: false,
    summary: "An extension's manifest file cannot be read or is not JSON.",
  },
  CONFIG_MANIFEST_HASH_MISMATCH: {
    side: 'manifest',
    retry: false,
    summary:
      "An extension's manifest does not have the sha256 the configuration pins (it is not the reviewed release).",
  },
  CONFIG_MANIFEST_INVALID: {
    side: 'manifest',
    retry: false,
    summary:
      "An extension's manifest fails manifest validation; the problem's message carries the manifest's own reason code.",
  },
  CONFIG_EXTENSION_ID_MISMATCH: {
    side: 'manifest',
    retry: false,
    summary: "An extension's key in the configuration differs from its manifest's id.",
  },
  CONFIG_IMAGE_UNKNOWN: {
    side: 'manifest',
    retry: false,
    summary: "A CLI's binary.image names no image the configuration pins.",
  },
  CONFIG_IMAGE_UNPINNED: {
    side: 'manifest',
    retry: false,
    summary:
      "An image's executable is not an absolute path to a regular file, or its sha256 is missing or malformed.",
  },
  CONFIG_IMAGE_HASH_MISMATCH: {
    side: 'manifest',
    retry: false,
    summary: "An image's executable does not have the pinned sha256.",
  },
  CONFIG_IMAGE_WRITABLE: {
    side: 'manifest',
    retry: false,
    summary:
      "An image's executable (or its directory) is writable by group or other, so someone else could replace it.",
  },
  CONFIG_IMAGE_ENTRYPOINT_MISMATCH: {
    side: 'manifest',
    retry: false,
    summary: "A CLI's binary.entrypoint is neither the pinned executable's path nor its file name.",
  },
  CONFIG_ENDPOINT_INVALID: {
    side: 'manifest',
    retry: false,
    summary: 'An endpoint is not a lower-case DNS name or a plainly written https URL on port 443.',
  },
  CONFIG_TOOL_NAME_CONFLICT: {
    side: 'manifest',
    retry: false,
    summary: 'Two installed CLIs would be offered under the same tool name <id>_cli.',
  },
  CONFIG_CLI_NOT_RUNNABLE: {
    side: 'manifest',
    retry: false,
    summary:
      'The broker would refuse every call of this CLI (credential binding); the message carries the reason code.',
  },
  CONFIG_IMAGE_PLAIN_UNDER_DAEMON: {
    side: 'manifest',
    retry: false,
    summary:
      "An image has profile plain in a configuration that a daemon or `clibroker serve` serves to agents (or that has a daemon block): a CLI run with that process's own file access could read its secrets.",
    remedy:
      'Give every image profile isolated (bubblewrap); plain images belong only to an in-process host whose caller is trusted.',
  },

  CONFIG_SECRET_WEAK: {
    side: 'manifest',
    retry: false,
    summary:
      'A token secret is too short or too uniform to resist guessing (fewer than 128 bits of entropy).',
    remedy: 'Generate one with `openssl rand -hex 32` (or `head -c 32 /dev/urandom | base64`).',
  },

  // ── Deployment problems: reason codes inside DEPLOYMENT_UNSAFE's details.problems (the socket's, in config validate's CONFIG_INVALID too) ──
  DEPLOY_FILE_EXPOSED: {
    side: 'manifest',
    retry: false,
    summary:
      'A configuration, secret, manifest or store file can be read or changed by a user other than the daemon user and root (its owner or mode).',
  },
  DEPLOY_DIR_EXPOSED: {
    side: 'manifest',
    retry: false,
    summary:
      'A directory above a configuration, secret, manifest or store file lets a user other than the daemon user and root replace what is in it, or list a secrets directory.',
  },
  DEPLOY_SANDBOX_SHOWS: {
    side: 'manifest',
    retry: false,
    summary:
      "A configuration, secret or store file lies under a path the isolated sandbox shows a CLI, so an agent's arguments could read it.",
  },
  DEPLOY_SOCKET_DIR_UNSAFE: {
    side: 'manifest',
    retry: false,
    summary:
      "The daemon socket's directory, or one above it, is writable by a user other than the daemon user and root.",
  },
  DEPLOY_SANDBOX_UNAVAILABLE: {
    side: 'manifest',
    retry: false,
    summary:
      "Bubblewrap cannot run the isolated profile as the daemon's user, so its CLIs would be withheld.",
  },
  DEPLOY_DAEMON_USER: {
    side: 'manifest',
    retry: false,
    summary: "The daemon's user is missing, is root, or is not the user the configuration's files belong to.",
  },

  // ── Manifest refusals: reason codes inside MANIFEST_INVALID's details.problems ──
  MANIFEST_FIELD_UNKNOWN: {
    side: 'manifest',
    retry: false,
    summary: 'A field the manifest schema does not define (usually a typo).',
  },
  MANIFEST_FIELD_INVALID: {
    side: 'manifest',
    retry: false,
    summary: 'A field has the wrong type, is missing, or is outside its allowed form.',
  },
  MANIFEST_TOO_MANY_CLIS: {
    side: 'manifest',
    retry: false,
    summary: 'The extension declares more than 8 CLIs.',
  },
  MANIFEST_DUPLICATE_CLI_ID: {
    side: 'manifest',
    retry: false,
    summary: 'Two CLIs in the extension share an id.',
  },
  MANIFEST_CREDENTIAL_HOSTS_TOO_MANY: {
    side: 'manifest',
    retry: false,
    summary: 'credentialHosts has more than 16 entries.',
  },
  MANIFEST_CREDENTIAL_HOSTS_ENTRY_EMPTY: {
    side: 'manifest',
    retry: false,
    summary: 'A credentialHosts entry lists no hosts.',
  },
  MANIFEST_CREDENTIAL_HOSTS_ENTRY_TOO_MANY_HOSTS: {
    side: 'manifest',
    retry: false,
    summary: 'A credentialHosts entry lists more than 16 hosts.',
  },
  MANIFEST_CREDENTIAL_HOSTS_TOO_MANY_SCOPES: {
    side: 'manifest',
    retry: false,
    summary: 'A credentialHosts entry lists more than 8 scopes.',
  },
  MANIFEST_CREDENTIAL_HOSTS_SCOPES_EMPTY: {
    side: 'manifest',
    retry: false,
    summary:
      "A credentialHosts entry has an empty scopes list; omit scopes for the connection's own credential, or list the scopes to mint for.",
  },
  MANIFEST_CREDENTIAL_HOSTS_SCOPE_INVALID: {
    side: 'manifest',
    retry: false,
    summary:
      'A credentialHosts scope is not one OAuth scope token (printable ASCII without space, double quote or backslash).',
  },
  MANIFEST_CREDENTIAL_HOST_NOT_DNS: {
    side: 'manifest',
    retry: false,
    summary:
      'A credentialHosts host is not an exact lower-case DNS name (wildcard, IP literal, port, upper case or trailing dot).',
  },
  MANIFEST_CREDENTIAL_HOST_DUPLICATE: {
    side: 'manifest',
    retry: false,
    summary: 'A host appears in two credentialHosts entries.',
  },
  MANIFEST_CREDENTIAL_HOST_NOT_IN_EGRESS: {
    side: 'manifest',
    retry: false,
    summary: "A credentialHosts host is not in the extension's egress list.",
  },
  MANIFEST_EGRESS_HOST_NOT_DNS: {
    side: 'manifest',
    retry: false,
    summary: 'An egress host is not an exact lower-case DNS name.',
  },
  MANIFEST_ENV_NAME_INVALID: {
    side: 'manifest',
    retry: false,
    summary: 'An environment variable name is not of the form [A-Za-z_][A-Za-z0-9_]*.',
  },
  MANIFEST_ENV_VALUE_TOO_LONG: {
    side: 'manifest',
    retry: false,
    summary: 'An env value is longer than 1,024 characters.',
  },
  MANIFEST_ENV_VALUE_SECRET: {
    side: 'manifest',
    retry: false,
    summary:
      'An env value looks like a secret (token prefix, JWT, PEM block, high-entropy string); secrets come from the connection, never the manifest.',
  },
  MANIFEST_ENV_NAME_RESERVED: {
    side: 'manifest',
    retry: false,
    summary:
      'An env, endpointEnv or credentialEnv name is owned by the platform (proxy, certificate trust, PATH/HOME/TMPDIR, loader or execution-changing variables).',
  },
  MANIFEST_ENV_NAME_IN_CREDENTIAL_ENV: {
    side: 'manifest',
    retry: false,
    summary: 'An env key is also a credentialEnv name.',
  },
  MANIFEST_ENDPOINT_ENV_CONFLICT: {
    side: 'manifest',
    retry: false,
    summary: 'endpointEnv is also a credentialEnv name or an env key.',
  },
  MANIFEST_PREAMBLE_LENGTH: {
    side: 'manifest',
    retry: false,
    summary: 'bootstrap.preamble has fewer than 1 or more than 32 arguments.',
  },
  MANIFEST_PREAMBLE_SHELL_METACHARACTER: {
    side: 'manifest',
    retry: false,
    summary: 'A bootstrap.preamble argument contains a shell metacharacter.',
  },
  MANIFEST_PREAMBLE_SECRET: {
    side: 'manifest',
    retry: false,
    summary: 'A bootstrap.preamble argument looks like a secret.',
  },
  MANIFEST_PREAMBLE_PLACEHOLDER_UNKNOWN: {
    side: 'manifest',
    retry: false,
    summary: 'A bootstrap.preamble argument uses a placeholder other than {clientId}, {tenantId}, {dummy}.',
  },
  MANIFEST_OVERRIDES_TOO_MANY: {
    side: 'manifest',
    retry: false,
    summary: 'wirePolicy.overrides has more than 256 entries.',
  },
  MANIFEST_OVERRIDE_UNCONSTRAINED: {
    side: 'manifest',
    retry: false,
    summary: 'A wirePolicy override constrains no field (method, pathPattern or graphqlOperation).',
  },
  MANIFEST_TOOLKIT_UNDECLARED: {
    side: 'manifest',
    retry: false,
    summary: 'The CLI names a toolkit the extension does not declare.',
  },
  MANIFEST_TOOLKIT_NOT_DEFAULT_CREDENTIAL: {
    side: 'manifest',
    retry: false,
    summary: 'The CLI names a toolkit bound to a credential other than auth.default.',
  },
  MANIFEST_TOOLKIT_MISSING: {
    side: 'manifest',
    retry: false,
    summary: 'The CLI names no toolkit and no toolkit of the extension uses auth.default.',
  },
  MANIFEST_TOOLKIT_AMBIGUOUS: {
    side: 'manifest',
    retry: false,
    summary: 'The CLI names no toolkit and two or more toolkits use auth.default.',
  },
  MANIFEST_HELP_TREE_PARTIAL: {
    side: 'manifest',
    retry: false,
    summary: 'The help tree is partial for a reason other than max_depth (a crawl budget ran out).',
  },
  MANIFEST_HELP_TREE_TOO_DEEP: {
    side: 'manifest',
    retry: false,
    summary: 'The help tree is deeper than helpCrawl.maxDepth.',
  },
  MANIFEST_HELP_TREE_TOO_MANY_COMMANDS: {
    side: 'manifest',
    retry: false,
    summary: 'The help tree has more than 512 commands.',
  },

  // ── The bundled CLI: failures before or around a command's core function ──
  COMMAND_UNKNOWN: {
    side: 'caller',
    retry: false,
    summary: 'The command line names no bundled command; nothing ran (exit code 2).',
    remedy: 'Run the command error.retry offers, or clibroker --help for the list.',
  },
  COMMAND_INPUT_INVALID: {
    side: 'caller',
    retry: false,
    summary:
      'A flag, argument, value or environment variable of the command was refused before anything ran (unknown flag, missing or malformed value, bad JSON); error.type says which and error.flag names the flag.',
    remedy: 'Run the corrected command in error.retry when there is one; error.expected shows the form.',
  },
  CONNECTION_INVALID: {
    side: 'caller',
    retry: false,
    summary:
      'The connection (the vendor credential as JSON, from CLIBROKER_CONNECTION or --connection-file) is missing, is not JSON, or lacks a field its kind needs.',
    remedy: 'docs/credentials.md lists the fields of each kind.',
  },
  STORE_NOT_FOUND: {
    side: 'caller',
    retry: false,
    summary: 'No store exists at the given path or URL; a command that only reads it does not create one.',
    remedy: 'Pass --store with the store the runs used.',
  },
  AUDIT_CHAIN_BROKEN: {
    side: 'broker',
    retry: false,
    summary:
      "The audit trail's hash chain does not verify: an event was edited, deleted or moved, or stored outside the chain; details.seq names where it breaks and details.kind what broke.",
    remedy:
      'Treat the trail from details.seq on as tampered with: compare it with a backup or an exported copy, and find who had write access to the database.',
  },
  AUDIT_RUN_NOT_FOUND: {
    side: 'caller',
    retry: false,
    summary: 'The store holds no audit event of the given run id (never run here, or pruned).',
    remedy: "Pass a run id from a call's result or from clibroker audit query.",
  },
  CREDENTIAL_GITHUB_APP_TOKEN_FAILED: {
    status: 401,
    side: 'credential',
    retry: true,
    summary:
      "Minting a GitHub App installation token for the call's tier failed; details carry GitHub's answer, never the private key, the app's JWT or a token.",
    remedy:
      "Check the connection's appId, installationId and private key, and that the app was granted every permission the tier's permission set asks for.",
  },
});

/** A code of the catalogue, such as `POLICY_BLOCKED`. Codes are never renamed or reused. */
export type ErrorCode = keyof typeof CATALOGUE;
