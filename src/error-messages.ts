/**
 * The words of the catalogue: the message of every code whose message says more than its
 * summary. A template is a function of typed data (or a fixed sentence); call sites pass the
 * data and `errorMessage`/`brokerError` in `errors.ts` render `CODE: …`, so no call site writes
 * a code into prose and one code never gets two wordings. `docs/errors.md` shows each shape.
 *
 * Nothing here reaches the child that was not already meant to: hosts, paths and values come
 * capped and redacted from the call site, as before.
 */
import type { ErrorCode, ErrorSpec } from './error-catalogue.js';

/** The catalogue, as a template sees it (passed in by the renderer, so this file imports no values). */
export type CatalogueView = Readonly<Record<ErrorCode, ErrorSpec>>;

/** A message template: a fixed sentence, or a function of its data. */
export type Template = string | ((data: never, catalogue: CatalogueView) => string);

/** A code with several fixed wordings, chosen by `problem`; `docs/errors.md` lists each one. */
export interface Variants<K extends string> {
  (d: { problem: K }): string;
  readonly variants: Readonly<Record<K, string>>;
}

/** "3 problems: A at x; B at y; and 1 more": the count, then the first `shown` by code and path. */
function problemList(problems: readonly ProblemRef[], shown: number): string {
  const n = problems.length;
  const first = problems
    .slice(0, shown)
    .map((p) => `${p.code} at ${p.path}`)
    .join('; ');
  const more = n > shown ? `; and ${n - shown} more` : '';
  return `${n} problem${n === 1 ? '' : 's'}: ${first}${more}`;
}

function variants<K extends string>(table: Readonly<Record<K, string>>): Variants<K> {
  return Object.assign((d: { problem: K }) => table[d.problem], { variants: table });
}

/** A request the policy refused, as its message names it: its class and the classifier's reason. */
export interface Refused {
  /** the request's wire class (the policy's WireClass; the catalogue sits below the policy) */
  class: 'read' | 'write' | 'destructive';
  reason: string;
}

const refused = (d: Refused): string => `this ${d.class} request (${d.reason})`;

/**
 * What kept a call at tier read, by its `cliTierReason`, and who could change it: never the
 * agent, whose arguments cannot move the tier. Unknown reasons fall back to the plain rule.
 */
const TIER_CAPPED: Readonly<Record<string, string>> = {
  'requested-default': 'no tier was asked for this call, and read is the default',
  requested: 'read is the tier asked for this call',
  'executor-max-tier':
    "the executor asked for write, and serve.executorMaxTier in the operator's configuration caps its calls at read",
  'linked-identity': "the connection acts as a person's linked identity, which only reads",
  'token-credential':
    "the connection's credential is a token (API key, bot token or basic), which only reads; writing takes an application identity the operator configures",
  'organization-ceiling':
    "the organization's ceiling is read (organization.ceiling in the operator's configuration)",
  'assignment-read':
    "this tool's Allow-writes switch is off; a person turns it on with `clibroker tiers set --cli <id>` (the change is audited)",
};

/** Who chose the requested tier (the policy's TierSource), for the reasons where that is what capped it. */
const TIER_SET_BY: Readonly<Record<string, string>> = {
  caller: 'the platform that makes the call chooses it',
  'daemon.cliTier': "this daemon listener's tier is daemon.cliTier in the operator's configuration",
  'serve.cliTier': "this server's tier for MCP calls is serve.cliTier in the operator's configuration",
  'serve.executorMaxTier': 'the operator changes serve.executorMaxTier',
};

/** The sentence after "needs tier write": what capped the tier and who can change it, as far as the call knows. */
function tierCap(d: { capped?: string; setBy?: string }): string {
  const why = d.capped !== undefined ? TIER_CAPPED[d.capped] : undefined;
  if (why === undefined)
    return 'Run the command with cliTier write, if the organization and assignment allow it.';
  const asked = d.capped === 'requested' || d.capped === 'requested-default';
  const who = asked ? `; ${TIER_SET_BY[d.setBy ?? 'caller'] ?? TIER_SET_BY['caller']}` : '';
  return `Here ${why}${who}. The command's arguments cannot change the tier, and retrying will not help.`;
}

/** The writes a command sent before it was stopped, for a message: at most 5, then a count. */
function sentList(writes: readonly { method: string; host: string; path: string }[]): string {
  const shown = writes
    .slice(0, 5)
    .map((w) => `${w.method} ${w.host}${w.path}`)
    .join(', ');
  return writes.length > 5 ? `${shown} and ${writes.length - 5} more` : shown;
}

/** The vendor request an approval is about, as the store keeps it. */
export interface ApprovalRequest {
  id: string;
  method: string;
  host: string;
  path: string;
  decidedBy?: string | null;
  graphqlOperation?: string | null;
}

/** A problem of a refused configuration or manifest: its reason code and where. */
export interface ProblemRef {
  code: string;
  path: string;
}

function upstream(d: { stage: 'response' | 'sent' | 'connect'; cause: string }): string {
  if (d.stage === 'response') return `the vendor's response was cut off (${d.cause}).`;
  if (d.stage === 'sent')
    return `the vendor host failed after the request was sent (${d.cause}); whether it was carried out is unknown.`;
  return `the vendor host could not be reached (${d.cause}); the request was not sent.`;
}

const unparsable = (d: { parseError: string }): string =>
  `the request could not be parsed as HTTP/1.1 (${d.parseError}); it was not sent.`;

const BAD_REQUEST = variants({
  'not-connect': 'this is a proxy; send CONNECT host:443.',
  expectation: 'the only expectation clibroker forwards is Expect: 100-continue; the request was not sent.',
  'host-twice': 'the request has more than one Host header; it was not sent.',
  'target-form': 'inside the tunnel only origin-form request targets (/path?query) are accepted.',
});

/** The templates by code; `satisfies` keeps every key a catalogue code and every value a template. */
export const MESSAGES = {
  // ── Policy refusals (the head of the message is the rule, under POLICY_BLOCKED) ──
  POLICY_BLOCKED: (d: Refused & { rule: string; why: string }) =>
    `${refused(d)} was refused by ${d.rule} (${d.why}).`,
  CLI_REQUEST_TIER_DENIED: (d: Refused & { capped?: string; setBy?: string }) =>
    `${refused(d)} needs tier write, and this call runs at tier read. ${tierCap(d)}`,
  CLI_EGRESS_HOST_DENIED: (d: { host: string } | { signInHost: string; method: string; path: string }) =>
    'signInHost' in d
      ? `on ${d.signInHost} clibroker answers the sign-in token request itself and lets only discovery through; ${d.method} ${d.path} is not allowed.`
      : `${d.host} is not in this extension's egress list, so the request was not sent. Add the host to the extension's egress list to allow it.`,
  CLI_EGRESS_ADDRESS_DENIED: (d: { host: string; kind: string; range: string }) =>
    `${d.host} resolves to a ${d.kind} address (${d.range}), which clibroker does not connect to, so the request was not sent. Point the name at a public address, or have the operator allow that range (upstream.allowAddresses).`,
  CLI_APPROVAL_PENDING: (d: Refused | { approval: ApprovalRequest }) =>
    'approval' in d
      ? `${d.approval.method} ${d.approval.host}${d.approval.path}${d.approval.graphqlOperation ? ` (${d.approval.graphqlOperation})` : ''} needs a person's approval; it was not sent. Approval ${d.approval.id} is pending: once a person approves it, resuming it runs the command again once.`
      : `${refused(d)} needs a person to approve it; the run paused and the request was not sent. Once approved, the command runs again.`,
  CLI_CONFIRMATION_REQUIRED: (d: (Refused & { why: string }) | { spent: true }) =>
    'spent' in d
      ? 'the approval for this request was already used or withdrawn.'
      : `${refused(d)} needs a person's approval, and no person can approve in this context (${d.why}).`,
  CLI_CONFIRMATION_NOT_APPROVABLE: (d: Refused) =>
    `${refused(d)} needs a person's approval, and this step's plan never asks one.`,
  CLI_CONFIRMATION_UNREVIEWABLE: (d: Refused & ({ previewLimit: number } | { target: string })) =>
    'target' in d
      ? `${refused(d)} needs approval, but its target cannot be shown to a reviewer whole (${d.target}).`
      : `${refused(d)} needs approval, but its body cannot be shown to a reviewer (binary, compressed or over ${d.previewLimit} bytes).`,
  CLI_CONFIRMATION_AFTER_WRITE: (
    d: Refused & { sent?: readonly { method: string; host: string; path: string }[] },
  ) =>
    d.sent && d.sent.length > 0
      ? `${refused(d)} needs approval, but this command already sent ${d.sent.length === 1 ? 'a write' : `${d.sent.length} writes`}; re-running it would repeat ${d.sent.length === 1 ? 'it' : 'them'}. The outcome of ${sentList(d.sent)} is unknown: check with a read before repeating anything. Split the command so the destructive step runs alone.`
      : `${refused(d)} needs approval, but this command already sent a write; re-running it would repeat that write. Split the command so the destructive step runs alone.`,
  EXEC_ACTION_CONFIRMATION_DECLINED: (d: { approval: ApprovalRequest; held?: true }) =>
    `${d.approval.decidedBy ?? 'the reviewer'} rejected ${d.approval.method} ${d.approval.host}${d.approval.path}; ${d.held ? 'it was not sent. Carry on without it.' : 'it cannot be run.'}`,

  // ── What the child sent ──
  CLI_UPLOAD_TOO_LARGE: (d: { max: number; size?: number }) =>
    `request bodies may be at most ${d.max} bytes${d.size === undefined ? '' : `; this one is ${d.size}`}. The request was not sent.`,
  CLI_REQUEST_BUDGET_EXCEEDED: (d: { max: number; request: number }) =>
    `this call may send at most ${d.max} requests; request ${d.request} was refused. Split the work over several calls.`,
  CLI_UPGRADE_REFUSED: (d: { upgrade: string }) =>
    `the request asks to upgrade the connection to ${JSON.stringify(d.upgrade)}; clibroker cannot govern upgraded connections, so it was not sent.`,
  CLI_HTTP2_ONLY: (d: { host: string }) =>
    `the client offered only HTTP/2 (ALPN) to ${d.host}; clibroker speaks HTTP/1.1 inside the tunnel.`,
  CLI_PORT_REFUSED: (d: { host: string; port: number }) =>
    `only port 443 can be tunnelled; ${d.host}:${d.port} was refused.`,
  CLI_HOST_INVALID: (d: { target: string }) =>
    `CONNECT target ${JSON.stringify(d.target)} is not host:port with a DNS host name; IP literals are refused.`,
  CLI_PLAIN_HTTP_REFUSED: (d: { method: string; path: string }) =>
    `plain-HTTP proxying (${d.method} ${d.path}) is refused; use https://.`,
  CLI_REQUEST_SIGNING_UNSUPPORTED: (d: { scheme: string }) =>
    `the request is signed by the client (${d.scheme}); clibroker cannot stamp or govern signed requests, so it was not sent.`,
  CLI_TRACE_REFUSED: (d: { method: string }) =>
    `${d.method} is refused: the origin would reflect the request back, stamped credential included. Use another method.`,
  CLI_METHOD_OVERRIDE_REFUSED: (d: { detail: string; where: string }) =>
    `${d.detail} (${d.where}); servers may run such a request as another method, so it was not sent. Send the request with the real HTTP method instead.`,
  CLI_TLS_HANDSHAKE_TIMEOUT: (d: { host: string; ms: number }) =>
    `the TLS handshake for ${d.host} did not finish within ${d.ms} ms; the tunnel was closed.`,
  CLI_REQUEST_HEAD_TIMEOUT:
    'the request head did not arrive in time; the connection was closed and nothing was sent.',
  CLI_TUNNEL_LIMIT_EXCEEDED: (d: { max: number; host: string }) =>
    `this call may have at most ${d.max} tunnels open at once; CONNECT ${d.host}:443 was refused. Reuse keep-alive connections.`,
  CLI_TUNNEL_CONNECT_REFUSED: 'CONNECT inside an intercepted tunnel is refused.',
  CLI_HOST_MISMATCH: (d: { what: 'TLS SNI' | 'Host'; got: string; host: string }) =>
    `${d.what} ${JSON.stringify(d.got)} does not match the CONNECT host ${d.host}.`,
  CLI_BAD_REQUEST: Object.assign(
    (
      d: { parseError: string } | { problem: 'not-connect' | 'expectation' | 'host-twice' | 'target-form' },
    ) => ('parseError' in d ? unparsable(d) : BAD_REQUEST(d)),
    { variants: BAD_REQUEST.variants },
  ),
  CLI_HEADERS_TOO_LARGE: unparsable,
  CLI_PROXY_AUTH_REQUIRED: 'this proxy needs the session credentials from HTTPS_PROXY.',
  CLI_SESSION_CLOSED: variants({
    'broker-closing': 'the broker is closing.',
  }),
  UPSTREAM_UNAVAILABLE: upstream,
  UPSTREAM_TIMEOUT: upstream,

  // ── Approvals ──
  APPROVAL_NOT_FOUND: (d: { id: string; where?: 'store' } | { notResumable: string }) =>
    'notResumable' in d
      ? `approval ${d.notResumable} was not made by a configured tool's call; it cannot be resumed here.`
      : `no approval has id '${d.id}'${d.where === 'store' ? ' in this store' : '.'}`,
  APPROVAL_NOT_PENDING: (d: { id: string; status: string; to?: 'approve' | 'reject'; held?: true }) =>
    d.held
      ? `approval ${d.id} is ${d.status}; the call cannot go on with it.`
      : d.to === undefined
        ? `approval ${d.id} is ${d.status}, not approved; it cannot resume a run.`
        : `approval ${d.id} is ${d.status}; only a pending approval can be ${d.to === 'approve' ? 'approved' : 'rejected'}`,

  // ── The store ──
  /** a validation code: the reason is the data (which field, which form) */
  STORE_INPUT_INVALID: (d: { reason: string }) => d.reason,
  STORE_WRITE_FAILED: (d: { what: string; cause: string }) => `${d.what}: ${d.cause}`,
  // where the database is stays in details.store (redacted) for the operator's commands and
  // logs; the front doors drop it, so an agent never learns the operator's database location
  STORE_UNAVAILABLE: (d: { what: string; why: string } | { badUrl: string }) =>
    'badUrl' in d
      ? `${d.badUrl} is not a usable PostgreSQL connection URL`
      : `${d.what}: the database cannot be used (${d.why})`,
  AUDIT_CHAIN_BROKEN: (d: { seq: number; kind: string; detail: string }) =>
    `the audit chain breaks at seq ${d.seq} (${d.kind}): ${d.detail}`,
  AUDIT_RUN_NOT_FOUND: (d: { runId: string }) => `no audit event of run ${d.runId} is in the store`,
  STORE_SCHEMA_UNSUPPORTED: (d: { version: number; name: string }) =>
    `migration ${d.version} (${d.name}) was edited after it was applied`,
  DEPENDENCY_MISSING: (d: { package: string; feature: string }) =>
    `${d.feature} needs ${d.package}, an optional peer dependency that is not installed here; run npm install ${d.package} next to clibroker (with npx: npx -p clibroker -p ${d.package} clibroker …)`,
  STORE_SCHEMA_OUTDATED: (d: { at: number; needs: number }) =>
    `the database is at schema version ${d.at}, this build needs ${d.needs}; run clibroker store migrate --config <file> (or --store <url>)`,

  // ── Tools, input, the host ──
  /** a validation code: the reason is the data (which field, which bound) */
  INVALID_TOOL_INPUT: (d: { reason: string }) => d.reason,
  /** the manifest's first problem, how many more, and what that reason code means */
  MANIFEST_INVALID: (d: { what: string; problems: readonly ProblemRef[] }, c: CatalogueView) => {
    const first = d.problems[0];
    if (!first) return `${d.what} was refused.`;
    const more = d.problems.length > 1 ? ` (and ${d.problems.length - 1} more)` : '';
    return `${d.what} was refused: ${first.code} at ${first.path}${more}. ${(c as Partial<CatalogueView>)[first.code as ErrorCode]?.summary ?? ''}`.trimEnd();
  },
  TOOL_VENDOR_CLI_NOT_OFFERED: (
    d:
      | { extension: string }
      | { name: string; offered: readonly string[] }
      | { withheld: string; why: string },
  ) =>
    'extension' in d
      ? `the configuration installs no extension "${d.extension}".`
      : 'withheld' in d
        ? `${d.withheld} is installed but not offered: ${d.why}`
        : `no offered tool is named '${d.name}'; the offered tools are ${d.offered.join(', ') || '(none)'}. Nothing was run.`,
  TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE: (d: { tool: string; why: string }) =>
    `${d.tool} is installed but not offered: ${d.why}`,
  TOOL_VENDOR_CLI_EXECUTABLE_CHANGED: (d: { image: string; path: string; why: string }) =>
    `the executable of image "${d.image}" (${d.path}) ${d.why}; nothing was run. The operator reviews the new binary and pins its sha256 in the configuration.`,
  CREDENTIAL_TOKEN_MINT_FAILED: (d: { tokenHost: string; what: string }) =>
    `the token endpoint ${d.tokenHost} refused or failed (${d.what}). Check the connection's client id, secret and scopes.`,
  CLI_TIMEOUT: 'the CLI did not finish before the call deadline and was killed.',
  CLI_EXITED_BY_SIGNAL: (d: { signal?: string | null }) =>
    `the CLI was ended by ${d.signal ?? 'a signal'} instead of exiting.`,
  /** a wiring bug inside clibroker: the reason says which */
  INTERNAL_ERROR: (d: { reason: string }) => d.reason,

  // ── Configuration and the daemon ──
  CONFIG_INVALID: (
    d: { what: string; problems: readonly ProblemRef[]; shown: number } | { problem: 'no-daemon-block' },
    c: CatalogueView,
  ) => {
    if ('problem' in d)
      return 'the configuration has no daemon block; clibroker daemon needs at least daemon.socket';
    return `${d.what} was refused with ${problemList(d.problems, d.shown)}. ${c.CONFIG_INVALID.summary}`;
  },
  CONFIG_SECRET_UNAVAILABLE: (d: { field: string; why: string }) =>
    `the secret of ${d.field} is unavailable: ${d.why}; nothing was run.`,
  DAEMON_UNAVAILABLE: (d: { socket: string; why: string }) =>
    `cannot connect to the broker daemon at ${d.socket} (${d.why}); nothing was run.`,
  DAEMON_UNAUTHORIZED: (d: { token: 'missing' | 'mismatch' }, c: CatalogueView) =>
    `${c.DAEMON_UNAUTHORIZED.summary} ${c.DAEMON_UNAUTHORIZED.remedy} (${d.token === 'mismatch' ? 'the token does not match' : 'no Authorization: Bearer header'})`,
  /** a validation code: the reason is the data */
  DAEMON_PROTOCOL_ERROR: (d: { reason: string }) => d.reason,
  DAEMON_SOCKET_IN_USE: (d: { path: string; why: string }) =>
    `${d.path} ${d.why}; the daemon did not start. Stop the other daemon or configure another daemon.socket.`,
  DAEMON_NO_ANSWER: (d: { socket: string; why: string }) =>
    `the broker daemon at ${d.socket} ${d.why}; the command may have run. Check the daemon log before running it again.`,
  DAEMON_SOCKET_DIR_UNSAFE: (
    d: { socket: string; directory: string; why: string; side: 'daemon' | 'client' },
    c: CatalogueView,
  ) =>
    d.side === 'daemon'
      ? `${d.directory} ${d.why}, so another user could put an impostor at ${d.socket}; the daemon did not start. ${c.DAEMON_SOCKET_DIR_UNSAFE.remedy}`
      : `${d.directory} ${d.why}, so the socket ${d.socket} could be an impostor; nothing was sent. Ask the operator to move the daemon's socket into a directory only the daemon's user can write.`,
  DEPLOYMENT_UNSAFE: (d: { problems: readonly ProblemRef[]; shown: number }, c: CatalogueView) => {
    return `the deployment has ${problemList(d.problems, d.shown)}. ${c.DEPLOYMENT_UNSAFE.remedy}`;
  },

  // ── Options of the public API: the field as written, and what is wrong with it ──
  BROKER_OPTIONS_INVALID: (d: { path: string; reason: string }) => `${d.path}: ${d.reason}`,
  SESSION_OPTIONS_INVALID: (d: { path: string; reason: string }) => `${d.path}: ${d.reason}`,
  RUNNER_OPTIONS_INVALID: (d: { path: string; reason: string }) => `${d.path}: ${d.reason}`,
  RUN_INPUT_INVALID: (d: { path: string; reason: string }) => `${d.path}: ${d.reason}`,

  // ── clibroker serve ──
  SERVE_FORBIDDEN: (d: { twoRoles: true } | { origin: true } | { role: string; needs: readonly string[] }) =>
    'twoRoles' in d
      ? 'this token is configured for more than one role; the operator must give each role (executor, MCP, each reviewer) its own token.'
      : 'origin' in d
        ? "the request came from a page of another site (its Origin is not this server's): a browser request must come from this server's own pages, such as the review page."
        : `a ${d.role} token cannot do this; it needs the ${d.needs.join(' or ')} token.`,
  /** a validation code: the reason is the data */
  SERVE_PROTOCOL_ERROR: (d: { reason: string }) => d.reason,
  SERVE_STOPPED: (d: { approvalId: string }) =>
    `the server stopped while the call waited for a person; approval ${d.approvalId} is still pending in the store and nothing was sent.`,
  SERVE_CALL_CANCELLED: (d: { approvalId: string } | { killed: true }) =>
    'approvalId' in d
      ? `the client cancelled the call while it waited for a person; approval ${d.approvalId} was withdrawn and nothing was sent.`
      : 'the client cancelled the call; its CLI was killed (what it already sent is in the audit trail).',
  SERVE_RATE_LIMITED: (d: { seconds: number; scope: 'address' | 'overall' }) =>
    d.scope === 'address'
      ? `too many failed attempts came from this address; try again in ${d.seconds} s (the token was not checked).`
      : `too many failed attempts came from all addresses together; try again in ${d.seconds} s (the token was not checked).`,
  SERVE_APPROVAL_HELD: (d: { approvalId: string }) =>
    `a call is waiting for approval ${d.approvalId} on one of the servers; it runs once the approval is decided. Nothing was resumed.`,
  SERVE_APPROVAL_TIMEOUT: (d: { approvalId: string; seconds: number }) =>
    `no person decided approval ${d.approvalId} within ${d.seconds} s; it expired (it can never be approved) and the request was not sent.`,
  CREDENTIAL_GITHUB_APP_TOKEN_FAILED: (d: { apiHost: string; what: string }) =>
    `the GitHub App installation token exchange at ${d.apiHost} failed (${d.what}). Check the connection's appId, installationId and private key, and the permissions the app was granted.`,
} as const satisfies { readonly [C in ErrorCode]?: Template };
