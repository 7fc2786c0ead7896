/**
 * The configuration's shape as zod 4 schemas: types, required fields, unknown keys, and
 * the forms a single field must have (an absolute path, a sha256, an address range). What
 * needs the file system or several fields (secrets, manifests, images, tools) is checked by
 * the loader after this, each with its own reason code. The JSON Schema shipped in
 * schemas/config.schema.json is generated from `configSchema`.
 */
import { isIP } from 'node:net';
import { isAbsolute } from 'node:path';
import { once, zod } from '../policy/zod.js';
import { parseCidr } from '../broker/address.js';
import { parseStrictHttpsUrl } from '../credentials/types.js';
import { isExactDnsName } from '../manifest/rules-hosts.js';
import { closestKey, knownKeysAt } from './did-you-mean.js';
import type { ConfigProblems, PathSeg } from './problems.js';

const SHA256_RE = /^[0-9a-f]{64}$/;
const NAME_RE = /^[a-z][a-z0-9_-]{0,31}$/;
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const SECRET_REF_EXPECTED = 'a secret reference, {"env": "NAME"} or {"file": "PATH"}';
export const ENDPOINT_EXPECTED =
  'a lower-case DNS name (ghe.acme.example) or an https:// URL on port 443 whose host is written plainly';
const TOKEN_URL_EXPECTED =
  'an https:// URL without a user name, password, backslash or percent-escape in its host: the client secret is sent there';

/** The endpoint's host when it is a bare lower-case DNS name or a strict https URL on 443; undefined otherwise. */
export function endpointHost(endpoint: string): string | undefined {
  let host = endpoint;
  if (endpoint.includes(':') || endpoint.includes('/')) {
    const u = parseStrictHttpsUrl(endpoint);
    host = u && u.port === '' ? u.hostname : '';
  }
  return isExactDnsName(host) ? host : undefined;
}

/** `ip:port` or `[ipv6]:port`, the port 1..65535; undefined otherwise. */
export function parseIpPort(text: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|(\d{1,3}(?:\.\d{1,3}){3})):([1-9][0-9]{0,4})$/.exec(text);
  if (!m) return undefined;
  const host = m[1] ?? m[2]!;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  try {
    parseCidr(host);
  } catch {
    return undefined;
  }
  return { host, port };
}

/**
 * A socket mode the daemon may create its socket with: an octal string (`"0660"`, `"660"`)
 * at most 0777 with no write bit for other. Connecting to a unix socket needs write
 * permission, so other-write would let every local user (the agent included) reach the daemon.
 */
export function parseSocketMode(text: string): number | undefined {
  if (!/^0?[0-7]{3}$/.test(text)) return undefined;
  const mode = Number.parseInt(text, 8);
  return (mode & 0o002) === 0 ? mode : undefined;
}

/** A string store naming PostgreSQL: a postgres:// or postgresql:// URL. */
const POSTGRES_URL_RE = /^postgres(?:ql)?:\/\//i;
/** A string that starts like a URL or another scheme (`mysql://`, `file:`, `postgres:/x`), not a path. */
const SCHEME_RE = /^[A-Za-z][A-Za-z0-9+.-]+:/;

/** Whether a connection URL carries a password: in its user info, or as a password or sslpassword parameter. */
function urlHoldsPassword(text: string): boolean {
  try {
    const u = new URL(text);
    if (u.password !== '') return true;
    for (const k of u.searchParams.keys()) if (/^(?:ssl)?password$/i.test(k)) return true;
    return false;
  } catch {
    // a URL that does not parse may still hold a password where the parser does not look
    return /:[^/@]*@|[?&](?:ssl)?password=/i.test(text);
  }
}

/**
 * Why a string `store` is refused, or undefined for a SQLite path or `:memory:`. A PostgreSQL
 * URL must be a secret reference (`{"postgres": {"env": NAME}}`): written here it would be
 * opened as a SQLite file named after it. Another URL or scheme is no store clibroker opens.
 * The message never shows the string: a URL may hold a password.
 */
export function storeStringProblem(
  text: string,
): { code: 'CONFIG_SECRET_INLINE' | 'CONFIG_FIELD_INVALID'; message: string } | undefined {
  if (text === ':memory:') return undefined;
  if (POSTGRES_URL_RE.test(text)) {
    if (urlHoldsPassword(text))
      return {
        code: 'CONFIG_SECRET_INLINE',
        message:
          'a PostgreSQL URL with its password is written here (not shown); write {"postgres": {"env": "NAME"}} (or {"postgres": {"file": "PATH"}}) and put the URL in that variable or file',
      };
    return {
      code: 'CONFIG_FIELD_INVALID',
      message:
        'a PostgreSQL URL (not shown) is written here, where a string is a SQLite file path; write {"postgres": {"env": "NAME"}} (or {"postgres": {"file": "PATH"}}) and put the URL in that variable or file',
    };
  }
  if (SCHEME_RE.test(text))
    return {
      code: 'CONFIG_FIELD_INVALID',
      message:
        'not a supported store (it starts with a URL scheme, not shown): a SQLite file path, :memory:, or {"postgres": {"env": "NAME"}} for PostgreSQL',
    };
  return undefined;
}

/** An HTTP header name (an RFC 9110 token). */
const HEADER_NAME_RE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the push writes itself (or the transport does): an operator's value would break the request. */
const OWN_HEADERS = new Set(['host', 'content-type', 'content-length', 'transfer-encoding', 'connection']);
const OTLP_ENDPOINT_EXPECTED =
  'an http:// or https:// URL without a user name, password, query or fragment (the base: /v1/logs is added)';

/** The collector's base URL when `text` is a plain http(s) URL without credentials, query or fragment. */
export function otlpEndpoint(text: string): URL | undefined {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
  if (u.username !== '' || u.password !== '' || u.search !== '' || u.hash !== '' || text.includes('#'))
    return undefined;
  return u;
}

/** Whether an http:// endpoint stays on this machine, where a header's secret may go in the clear. */
function loopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** A reviewer's name as the configuration spells it: recorded as who decided an approval. */
export const REVIEWER_NAME_RE = /^[a-z0-9][a-z0-9._@-]{0,63}$/;

function build(z: typeof import('zod').z) {
  const nonEmpty = z.string().min(1);
  const tier = z.enum(['read', 'write']);
  const sha256 = z.string().regex(SHA256_RE, 'a sha256: 64 lower-case hex digits');
  const name = z.string().regex(NAME_RE, 'a lower-case name: [a-z][a-z0-9_-]{0,31}');

  /** Where a secret is; never the secret itself. */
  const secretRefSchema = z
    .union([
      z.strictObject({ env: z.string().regex(ENV_NAME_RE, 'an environment variable name') }),
      z.strictObject({
        file: nonEmpty.describe(
          'a file readable by its owner only (mode 0600 or 0400); relative to the configuration file',
        ),
      }),
    ])
    .describe(SECRET_REF_EXPECTED);

  const tokenUrl = z.string().refine((s) => parseStrictHttpsUrl(s) !== undefined, TOKEN_URL_EXPECTED);

  const permissionName = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'a GitHub App permission name');

  const connectionSchema = z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('oauth_access_token'), accessToken: secretRefSchema }),
    z.strictObject({ kind: z.literal('api_key'), apiKey: secretRefSchema }),
    z.strictObject({ kind: z.literal('bot_token'), token: secretRefSchema }),
    z.strictObject({ kind: z.literal('basic'), username: nonEmpty, password: secretRefSchema }),
    z.strictObject({
      kind: z.literal('oauth_client_credentials'),
      clientId: nonEmpty,
      tenantId: nonEmpty.optional(),
      tokenUrl,
      clientSecret: secretRefSchema,
      scopes: z
        .array(
          z
            .string()
            .regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'one OAuth scope token (no spaces, quotes or backslashes)'),
        )
        .min(1, 'at least one scope, or leave the field out')
        .optional(),
    }),
    z.strictObject({
      kind: z.literal('github_app'),
      appId: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "the app's id or client id"),
      installationId: z.string().regex(/^[0-9]{1,20}$/, 'the installation id (digits, as a string)'),
      privateKey: secretRefSchema.describe(
        "the app's private key (PEM); it signs the app's JWT and is never sent",
      ),
      permissions: z
        .strictObject({
          read: z
            .record(permissionName, z.literal('read', { message: "read: a read call's token never writes" }))
            .refine((o) => Object.keys(o).length > 0, 'at least one permission')
            .describe("the read tier's permission set: read levels only")
            .optional(),
          write: z
            .record(permissionName, z.enum(['read', 'write', 'admin']))
            .refine((o) => Object.keys(o).length > 0, 'at least one permission')
            .describe("the write tier's permission set")
            .optional(),
        })
        .describe(
          "each tier's permission set for the installation token a call gets (defaults: contents, issues, pull_requests at the tier's level, metadata read)",
        )
        .optional(),
      repositories: z
        .array(z.string().regex(/^[A-Za-z0-9._-]{1,100}$/, 'a repository name, without the owner'))
        .min(1, 'at least one repository, or leave the field out')
        .describe('narrow every token to these repositories of the installation')
        .optional(),
    }),
  ]);

  const installSchema = z.strictObject({
    manifest: z
      .union([
        nonEmpty.describe('a JSON manifest file, relative to the configuration file'),
        z.looseObject({}),
      ])
      .describe('the extension manifest: a file path, or (from TypeScript) the manifest object'),
    sha256: sha256.describe(
      "the pinned sha256 of the reviewed release: of the file's bytes, or of canonicalManifestJson(object)",
    ),
    connection: connectionSchema.describe('how the extension authenticates; every secret is a reference'),
    endpoint: z
      .string()
      .refine((s) => endpointHost(s) !== undefined, ENDPOINT_EXPECTED)
      .describe(
        `the organization's server for this vendor (a GHE host), which receives this extension's credential: ${ENDPOINT_EXPECTED}`,
      )
      .optional(),
    identity: z
      .enum(['assigned', 'linked'])
      .describe(
        "whose identity the connection is (default assigned); a person's linked identity is read-only",
      )
      .optional(),
    assignment: nonEmpty
      .describe('the assignment whose allow switches (one per CLI) gate writes (default "default")')
      .optional(),
    toolkits: z
      .record(
        nonEmpty,
        z.strictObject({
          enabled: z
            .boolean()
            .describe(
              "false: the toolkit's CLIs are not offered (withheld, TOOL_VENDOR_CLI_TOOLKIT_DISABLED)",
            ),
        }),
      )
      .describe(
        'per toolkit the manifest declares: whether its CLIs are offered; a toolkit not listed is enabled',
      )
      .optional(),
  });

  const imageSchema = z.strictObject({
    executable: z
      .string()
      .refine(isAbsolute, 'an absolute path')
      .describe('absolute path of the program: a regular file, not writable by group or other'),
    sha256: sha256.describe("sha256 of the program's bytes (sha256sum)"),
    profile: z
      .enum(['isolated', 'plain'])
      .describe(
        "isolated: bubblewrap hides the daemon's files from the CLI; plain: the CLI has the daemon's file access",
      ),
    readOnlyPaths: z
      .array(z.string().refine(isAbsolute, 'an absolute path'))
      .describe('isolated only: extra host paths bound read-only')
      .optional(),
    conformance: z
      .enum(['required', 'waived'])
      .describe(
        "required: offered only once a passing conformance verdict for this sha256 is in the store; waived: offered without one (default: the configuration's conformance)",
      )
      .optional(),
  });

  const daemonSchema = z.strictObject({
    socket: z
      .string()
      .refine(isAbsolute, 'an absolute path')
      .describe("absolute path of the daemon's unix socket"),
    socketMode: z
      .string()
      .refine(
        (s) => parseSocketMode(s) !== undefined,
        'an octal mode string such as "0660", at most 0777, without the write bit for other (anyone could connect)',
      )
      .describe('the socket file\'s mode, default "0660"; never writable by other')
      .optional(),
    cliTier: tier.describe('the tier every call through this listener requests (default read)').optional(),
    context: z
      .enum(['agent-step', 'agent-step-never-asks', 'chat', 'api', 'tool-block', 'scheduled'])
      .describe('where the calls run (default agent-step: a person can approve)')
      .optional(),
    executorToken: secretRefSchema
      .describe(`when set, clients send Authorization: Bearer <token>; ${SECRET_REF_EXPECTED}`)
      .optional(),
  });

  const serveSchema = z.strictObject({
    host: z
      .string()
      .refine((s) => isIP(s) !== 0, 'an IP address such as "127.0.0.1" or "::1"')
      .describe('the address the HTTP server binds (default 127.0.0.1: this machine only)')
      .optional(),
    port: z
      .number()
      .int()
      .min(0)
      .max(65535)
      .describe('the HTTP port (default 8787; 0 picks a free one); --port overrides it')
      .optional(),
    publicUrl: z
      .string()
      .refine(
        (s) => /^https?:\/\/[^/?#\s]+\/?$/.test(s),
        'an http(s) origin such as "https://broker.acme.example"',
      )
      .describe(
        'the origin people reach the server at, for the review links (default the bound address); with the bound address, the only Host and Origin the server answers to',
      )
      .optional(),
    executorToken: secretRefSchema
      .describe(`the bearer token that runs tools over the Platform API; ${SECRET_REF_EXPECTED}`)
      .optional(),
    mcpToken: secretRefSchema
      .describe(`the bearer token of the MCP endpoint /mcp; ${SECRET_REF_EXPECTED}`)
      .optional(),
    reviewers: z
      .record(
        z.string().regex(REVIEWER_NAME_RE, 'a reviewer name: [a-z0-9][a-z0-9._@-]{0,63}'),
        secretRefSchema,
      )
      .describe('reviewer name → the bearer token that decides approvals (and cannot run tools)')
      .optional(),
    approvalTimeoutSeconds: z
      .number()
      .int()
      .min(1)
      .max(86_400)
      .describe('how long a call waits for a person before its approval expires (default 600)')
      .optional(),
    cliTier: tier.describe('the tier MCP calls request (default daemon.cliTier, else read)').optional(),
    context: z
      .enum(['agent-step', 'agent-step-never-asks', 'chat', 'api', 'tool-block', 'scheduled'])
      .describe('where MCP calls run (default daemon.context, else agent-step)')
      .optional(),
    executorMaxTier: tier
      .describe(
        "the highest tier the Platform API's executor may request (default read: a requested write runs at read)",
      )
      .optional(),
    reviewSessionIdleMinutes: z
      .number()
      .int()
      .min(1)
      .max(1440)
      .describe('a review page session not used for this long ends (default 30)')
      .optional(),
    reviewSessionMaxHours: z
      .number()
      .int()
      .min(1)
      .max(168)
      .describe('a review page session ends this long after sign-in, however busy (default 12)')
      .optional(),
  });

  const upstreamSchema = z.strictObject({
    connectTo: z
      .record(
        z.string().refine(isExactDnsName, 'a lower-case DNS name'),
        z
          .string()
          .refine((s) => parseIpPort(s) !== undefined, 'ip:port, such as "127.0.0.1:8443" or "[::1]:8443"'),
      )
      .optional(),
    caFile: nonEmpty
      .describe("a PEM file of CAs trusted for upstream TLS instead of the system's")
      .optional(),
    allowAddresses: z
      .array(
        z.string().superRefine((s, ctx) => {
          try {
            parseCidr(s);
          } catch (e) {
            ctx.addIssue({ code: 'custom', message: (e as Error).message });
          }
        }),
      )
      .describe('special-purpose address ranges (CIDR) an egress name may resolve to; refused by default')
      .optional(),
  });

  /** Where the server pushes a copy of its audit events: an OTLP/HTTP collector. */
  const auditOtlpSchema = z
    .strictObject({
      endpoint: z
        .string()
        .refine((s) => otlpEndpoint(s) !== undefined, OTLP_ENDPOINT_EXPECTED)
        .describe(
          "the collector's base URL (https://collector:4318); events are POSTed to {endpoint}/v1/logs",
        ),
      headers: z
        .record(
          z
            .string()
            .regex(HEADER_NAME_RE, 'an HTTP header name')
            .refine((h) => !OWN_HEADERS.has(h.toLowerCase()), 'a header the push writes itself'),
          secretRefSchema,
        )
        .describe('header name → where its value is (an API key, a token): read at every POST, never logged')
        .optional(),
      batchSize: z
        .number()
        .int()
        .min(1)
        .max(10_000)
        .describe('log records per POST (default 512)')
        .optional(),
      flushIntervalMs: z
        .number()
        .int()
        .min(10)
        .max(60_000)
        .describe('a batch that is not full is sent after this many milliseconds (default 1000)')
        .optional(),
      maxQueue: z
        .number()
        .int()
        .min(1)
        .max(1_000_000)
        .describe(
          'events waiting to be sent at most (default 10000); beyond it the oldest are dropped from the push',
        )
        .optional(),
      retryForMs: z
        .number()
        .int()
        .min(0)
        .max(3_600_000)
        .describe('how long one batch is retried, with backoff, before it counts as failed (default 60000)')
        .optional(),
      timeoutMs: z
        .number()
        .int()
        .min(100)
        .max(120_000)
        .describe("one POST's wait for the collector's answer (default 10000)")
        .optional(),
    })
    .refine(
      (o) => {
        const u = otlpEndpoint(o.endpoint);
        return (
          !u ||
          u.protocol === 'https:' ||
          loopbackHost(u.hostname) ||
          Object.keys(o.headers ?? {}).length === 0
        );
      },
      {
        message: 'headers hold secrets: send them over https://, or over http:// to this machine only',
        path: ['headers'],
      },
    );

  /** The store: a SQLite path (or :memory:), or a PostgreSQL database whose URL is a secret reference. */
  const storeSchema = z
    .union([
      nonEmpty
        .refine((s) => storeStringProblem(s) === undefined, {
          error: (iss) => storeStringProblem(String(iss.input))?.message ?? 'not a store',
        })
        .describe('the SQLite store file (relative to the configuration file), or :memory:'),
      z
        .strictObject({
          postgres: secretRefSchema.describe(
            'where the PostgreSQL URL (postgres://user:password@host:port/db) is: a variable or a file, never the URL itself',
          ),
          poolSize: z
            .number()
            .int()
            .min(1)
            .max(100)
            .describe('connections per process (default 10)')
            .optional(),
          reconnectWindowSeconds: z
            .number()
            .int()
            .min(0)
            .max(300)
            .describe('how long a call waits for an unreachable server before STORE_UNAVAILABLE (default 10)')
            .optional(),
        })
        .describe('a PostgreSQL store shared by every broker over the same database'),
    ])
    .describe(
      'the store: a SQLite file (relative to the configuration file), :memory:, or {"postgres": {"env": NAME}} for PostgreSQL',
    );

  /** The whole operator configuration. */
  const configSchema = z.strictObject({
    $schema: z.string().optional(),
    version: z.literal(1),
    organization: z.strictObject({ ceiling: tier.describe('the highest tier any call may have') }),
    images: z
      .record(name, imageSchema)
      .describe("image name → pinned program; every installed CLI's binary.image must name one"),
    extensions: z
      .record(name, installSchema)
      .describe("extension id → its install; the key must equal the manifest's id"),
    store: storeSchema,
    storeRetention: z
      .strictObject({
        days: z
          .number()
          .int()
          .min(1)
          .max(36_500)
          .describe('audit events older than this many days are pruned (when the store opens, then hourly)'),
      })
      .describe(
        'how long the store keeps audit events; a run with a pending or approved-not-consumed approval keeps its events, approvals are never pruned (default: keep forever)',
      )
      .optional(),
    deadlineSeconds: z
      .number()
      .int()
      .min(1)
      .max(270)
      .describe("seconds before a call's CLI is killed (default 270)")
      .optional(),
    conformance: z
      .enum(['required', 'optional'])
      .describe(
        'required (the default): every image is offered only once a passing conformance verdict for its sha256 is in the store, unless the image waives it; optional: only images that say required are gated',
      )
      .optional(),
    strict: z
      .boolean()
      .describe(
        'all or nothing: a problem of one CLI refuses the whole configuration instead of withholding that CLI (default false)',
      )
      .optional(),
    daemon: daemonSchema.describe("the broker daemon's listener").optional(),
    serve: serveSchema
      .describe('clibroker serve: the HTTP server (Platform API, MCP, review page)')
      .optional(),
    upstream: upstreamSchema.describe('operator-level routing of the vendor side').optional(),
    audit: z
      .strictObject({
        otlp: auditOtlpSchema
          .describe(
            'push a copy of every audit event this server stores to an OpenTelemetry collector (OTLP/HTTP JSON logs)',
          )
          .optional(),
      })
      .describe('where a copy of the audit events goes besides the store')
      .optional(),
  });
  return {
    secretRefSchema,
    connectionSchema,
    installSchema,
    imageSchema,
    daemonSchema,
    serveSchema,
    storeSchema,
    upstreamSchema,
    auditOtlpSchema,
    configSchema,
  };
}

/**
 * The configuration's zod schemas, built on the first call: zod is loaded then, not when
 * the configuration module is imported.
 */
export const configSchemas: () => ReturnType<typeof build> = once(() => build(zod().z));

const SECRET_FIELDS = new Set([
  'accessToken',
  'apiKey',
  'token',
  'password',
  'clientSecret',
  'privateKey',
  'executorToken',
  'mcpToken',
]);

/** True when `path` is a field that holds a secret reference. */
function isSecretPath(path: readonly PathSeg[]): boolean {
  const last = path.at(-1);
  if (path.length === 3 && path[0] === 'serve' && path[1] === 'reviewers') return true;
  if (path.length === 4 && path[0] === 'audit' && path[1] === 'otlp' && path[2] === 'headers') return true;
  if (typeof last !== 'string' || !SECRET_FIELDS.has(last)) return false;
  if (last === 'executorToken') return path.length === 2 && (path[0] === 'daemon' || path[0] === 'serve');
  if (last === 'mcpToken') return path.length === 2 && path[0] === 'serve';
  return path.at(-2) === 'connection';
}

/** The reason code of a shape issue: the field decides when it has its own code. */
function codeFor(
  path: readonly PathSeg[],
): 'CONFIG_IMAGE_UNPINNED' | 'CONFIG_ENDPOINT_INVALID' | 'CONFIG_FIELD_INVALID' {
  if (path[0] === 'images' && path.length === 3 && (path[2] === 'executable' || path[2] === 'sha256'))
    return 'CONFIG_IMAGE_UNPINNED';
  if (path[0] === 'extensions' && path.length === 3 && path[2] === 'endpoint')
    return 'CONFIG_ENDPOINT_INVALID';
  return 'CONFIG_FIELD_INVALID';
}

/**
 * Run the configuration schema and turn every zod issue into a problem. A secret field
 * holding a string is CONFIG_SECRET_INLINE, and its value is never shown.
 */
export function shapeProblems(input: unknown, out: ConfigProblems): void {
  const { configSchema } = configSchemas();
  const r = configSchema.safeParse(input);
  if (r.success) return;
  for (const issue of r.error.issues) {
    const path: PathSeg[] = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeysAt(configSchema, path).filter((k) => !issue.keys.includes(k));
      for (const k of issue.keys) {
        const close = closestKey(k, known);
        out.add(
          'CONFIG_FIELD_UNKNOWN',
          [...path, k],
          close !== undefined
            ? `not a configuration field; did you mean "${close}"?`
            : 'not a configuration field (a typo?); docs/config.md lists every field',
        );
      }
      continue;
    }
    if (isSecretPath(path)) {
      const v = valueAt(input, path);
      if (typeof v === 'string')
        out.add(
          'CONFIG_SECRET_INLINE',
          path,
          `the secret itself is written here (not shown); write ${SECRET_REF_EXPECTED} and put the secret in that variable or file`,
        );
      else out.add('CONFIG_FIELD_INVALID', path, `expected ${SECRET_REF_EXPECTED}`);
      continue;
    }
    if (path.length === 1 && path[0] === 'store') {
      // the union's issues say little; the field's own reason is clearer, and never shows the value
      const v = valueAt(input, path);
      const own = typeof v === 'string' && v !== '' ? storeStringProblem(v) : undefined;
      const pg = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)['postgres'] : undefined;
      if (own) out.add(own.code, path, own.message);
      else if (typeof pg === 'string')
        out.add(
          'CONFIG_SECRET_INLINE',
          [...path, 'postgres'],
          `the PostgreSQL URL itself is written here (not shown); write ${SECRET_REF_EXPECTED} and put the URL in that variable or file`,
        );
      else
        out.add(
          'CONFIG_FIELD_INVALID',
          path,
          'expected a SQLite file path, :memory:, or {"postgres": {"env": "NAME"} | {"file": "PATH"}, "poolSize"?: 1..100, "reconnectWindowSeconds"?: 0..300}',
        );
      continue;
    }
    if (path[0] === 'store' && path[1] === 'postgres' && path.length === 2) {
      const v = valueAt(input, path);
      if (typeof v === 'string')
        out.add(
          'CONFIG_SECRET_INLINE',
          path,
          `the PostgreSQL URL itself is written here (not shown); write ${SECRET_REF_EXPECTED} and put the URL in that variable or file`,
        );
      else out.add('CONFIG_FIELD_INVALID', path, `expected ${SECRET_REF_EXPECTED}`);
      continue;
    }
    if (issue.code === 'invalid_union' && path.at(-1) === 'kind' && path.at(-2) === 'connection') {
      out.add(
        'CONFIG_FIELD_INVALID',
        path,
        'one of oauth_access_token, api_key, bot_token, basic, oauth_client_credentials, github_app',
      );
      continue;
    }
    if (issue.code === 'invalid_key') {
      out.add('CONFIG_FIELD_INVALID', path, `the key is not ${issue.issues[0]?.message ?? 'valid'}`);
      continue;
    }
    out.add(codeFor(path), path, issue.message);
  }
}

function valueAt(root: unknown, path: readonly PathSeg[]): unknown {
  let v: unknown = root;
  for (const p of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}
