/**
 * The host side of the bundled `clibroker` commands: where the store lives, where the
 * connection (the secret) comes from, an in-process broker and runner per invocation, and
 * the run spec a paused run leaves next to the store so `vendor resume` can run the same
 * command again. Loaded only by a command's `run` (a dynamic import): `--help` never pays
 * for the broker, the runner, the store or SQLite.
 *
 * Secrets never travel in argv: the connection is read from $CLIBROKER_CONNECTION or a
 * `--connection-file`, and it is never written anywhere (not in the run spec, not in the store).
 */
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { Tier } from '../broker/types.js';
import type { Connection } from '../credentials/types.js';
import { BrokerError, brokerError, errorMessage } from '../errors.js';
import type { ExtensionManifest } from '../manifest/types.js';
import type { ApprovalContext } from '../policy/index.js';
import type { Runner, RunInput } from '../runs/index.js';
import type { Store } from '../store/types.js';
import { isPostgresUrl, redactStoreUrl } from '../store/url.js';
import { echo, fail } from './envelope.js';
import { type RunData, runData } from './run-result.js';

/** The environment variables the bundled commands read. */
export const ENV = {
  store: 'CLIBROKER_STORE',
  connection: 'CLIBROKER_CONNECTION',
  /** demos and tests only: start the embedded mock vendor and route every host to it */
  mockVendor: 'CLIBROKER_MOCK_VENDOR',
} as const;

type Env = Readonly<Record<string, string | undefined>>;

/** `--store`, else $CLIBROKER_STORE, else ~/.clibroker/store.db: a SQLite path or a postgres:// URL. */
export function storePath(flag: string | undefined, env: Env = process.env): string {
  return flag ?? (env[ENV.store] || join(homedir(), '.clibroker', 'store.db'));
}

/**
 * Open the store. `create`: make the parent directory (mode 0700) and the database when
 * absent (vendor run). Otherwise a missing file is an error, so a mistyped --store does not
 * answer with an empty, freshly created store.
 */
export async function openStore(
  flag: string | undefined,
  create: boolean,
): Promise<{ store: Store; path: string }> {
  const path = storePath(flag);
  if (isPostgresUrl(path)) {
    // The database is shared; run specs stay on this host, beside a local anchor named by a
    // hash of the redacted URL (never the URL: it may hold a password).
    const { openStore: open } = await import('../store/open.js');
    // (saveRunSpec creates the directory when a run pauses; nothing is written before.)
    const anchor = join(
      homedir(),
      '.clibroker',
      `pg-${createHash('sha256').update(redactStoreUrl(path)).digest('hex').slice(0, 16)}`,
    );
    return { store: await open(path), path: anchor };
  }
  if (path !== ':memory:') {
    if (create) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    else if (!existsSync(path)) {
      fail('runtime', `no store at ${echo(path, 100)}`, {
        code: 'STORE_NOT_FOUND',
        flag: 'store',
        got: path,
        hint: `pass --store <path> or set ${ENV.store}; 'clibroker vendor run' creates the store on first use`,
      });
    }
  }
  const { openSqliteStore } = await import('../store/sqlite.js');
  return { store: openSqliteStore(path), path };
}

/**
 * The store an operator command opens: `--store`, or the `store` of the configuration named by
 * `--config` (a relative path is relative to the configuration's directory). Only that field
 * is read: an operator approving a request needs no secret to be present.
 */
export function storeFlag(p: {
  store?: string | undefined;
  config?: string | undefined;
}): string | undefined {
  if (p.config === undefined) return p.store;
  if (p.store !== undefined) {
    fail('flag-parse', '--store and --config both name a store; pass one of them', {
      flag: 'store',
      hint: 'with --config the store is the one the configuration names',
    });
  }
  let store: unknown;
  try {
    store = (JSON.parse(readFileSync(p.config, 'utf8')) as { store?: unknown }).store;
  } catch (e) {
    fail(
      'flag-parse',
      `cannot read the configuration ${echo(p.config, 100)}: ${(e as NodeJS.ErrnoException).code ?? 'not JSON'}`,
      {
        flag: 'config',
        got: p.config,
        hint: 'pass the operator configuration file (JSON); clibroker config validate --config <file> checks it',
      },
    );
  }
  if (typeof store !== 'string' || store === '')
    fail('flag-parse', `the configuration ${echo(p.config, 100)} names no store`, {
      flag: 'config',
      got: p.config,
      expected: '"store": "<path of the SQLite store>"',
    });
  return store === ':memory:' || isAbsolute(store) || store.includes('://')
    ? store
    : resolve(dirname(p.config), store);
}

/** Open the store, run `fn`, close it. */
export async function withStore<T>(
  flag: string | undefined,
  create: boolean,
  fn: (store: Store, path: string) => Promise<T>,
): Promise<T> {
  const { store, path } = await openStore(flag, create);
  try {
    return await fn(store, path);
  } finally {
    await store.close();
  }
}

const CONNECTION_FIELDS: Record<Connection['kind'], { required: string[]; optional?: string[] }> = {
  oauth_access_token: { required: ['accessToken'] },
  api_key: { required: ['apiKey'] },
  bot_token: { required: ['token'] },
  basic: { required: ['username', 'password'] },
  oauth_client_credentials: {
    required: ['clientId', 'clientSecret', 'tokenUrl'],
    optional: ['tenantId', 'scopes'],
  },
};

const CONNECTION_EXAMPLE = '{"kind":"oauth_access_token","accessToken":"<token>"}';

/**
 * Check a connection's shape. Messages name fields and kinds only — never a value, since
 * every string in a connection may be a secret.
 */
export function checkConnection(value: unknown, source: string): Connection {
  const bad = (what: string): never =>
    fail('auth', `the connection from ${source} ${what}`, {
      flag: 'connection-file',
      expected: `one of kind ${Object.keys(CONNECTION_FIELDS).join(', ')}, e.g. ${CONNECTION_EXAMPLE}`,
      hint: 'docs/credentials.md lists the fields of each kind',
    });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad('is not a JSON object');
  const o = value as Record<string, unknown>;
  const spec = CONNECTION_FIELDS[o['kind'] as Connection['kind']];
  if (typeof o['kind'] !== 'string' || !spec) return bad('has no known kind');
  for (const k of spec.required)
    if (typeof o[k] !== 'string' || o[k] === '') bad(`(kind ${o['kind']}) lacks the string field ${k}`);
  const known = new Set(['kind', ...spec.required, ...(spec.optional ?? [])]);
  const extra = Object.keys(o).filter((k) => !known.has(k));
  if (extra.length) bad(`(kind ${o['kind']}) has unknown field(s) ${extra.join(', ')}`);
  if (o['tenantId'] !== undefined && typeof o['tenantId'] !== 'string')
    bad('has a tenantId that is not a string');
  if (
    o['scopes'] !== undefined &&
    !(Array.isArray(o['scopes']) && o['scopes'].every((s) => typeof s === 'string'))
  )
    bad('has scopes that are not a string array');
  return o as unknown as Connection;
}

/**
 * The connection: `--connection-file <path>` when given (an explicit flag wins), else
 * $CLIBROKER_CONNECTION. Never argv, never stdin (stdin belongs to the vendor CLI).
 */
export function loadConnection(file: string | undefined, env: Env = process.env): Connection {
  if (file !== undefined) {
    if (file === '-') {
      fail(
        'flag-parse',
        "--connection-file does not read stdin: stdin is the vendor CLI's (--stdin-file -)",
        {
          flag: 'connection-file',
          got: file,
          hint: `pass a file path (e.g. --connection-file <(vault read …) or a 0600 file), or set ${ENV.connection}`,
        },
      );
    }
    // A value that looks like the JSON itself holds the secret: it is never repeated, not even redacted.
    const inline = /^\s*[{["]/.test(file) || file.includes('\n');
    const named = inline ? '--connection-file' : `--connection-file ${echo(file, 100)}`;
    if (inline) {
      return fail(
        'flag-parse',
        '--connection-file takes a path, but its value looks like the connection JSON itself (not repeated here: it holds the secret)',
        {
          flag: 'connection-file',
          expected: '--connection-file <path of a 0600 file holding the connection JSON>',
          hint: `write the JSON to a 0600 file and pass its path, or set ${ENV.connection}; secrets never go in argv (where other processes can read them)`,
        },
      );
    }
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      return fail(
        'flag-parse',
        `cannot read ${named}: ${(e as NodeJS.ErrnoException).code ?? 'unreadable'}`,
        {
          flag: 'connection-file',
          got: file,
          hint: 'pass a readable file holding the connection JSON',
        },
      );
    }
    return checkConnection(parseSecretJson(text, named), named);
  }
  const raw = env[ENV.connection];
  if (raw === undefined || raw === '') {
    return fail(
      'auth',
      `no connection: set ${ENV.connection} to the connection JSON, or pass --connection-file <path>`,
      {
        flag: 'connection-file',
        expected: CONNECTION_EXAMPLE,
        hint: 'the secret never goes in argv, so there is no --connection flag',
      },
    );
  }
  return checkConnection(parseSecretJson(raw, `$${ENV.connection}`), `$${ENV.connection}`);
}

/** JSON.parse without echoing the text (it holds a secret). */
function parseSecretJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return fail('auth', `the connection from ${source} is not valid JSON`, {
      flag: 'connection-file',
      expected: CONNECTION_EXAMPLE,
    });
  }
}

/** A broker and a runner for one invocation; `close` ends them (not the store). */
interface Engine {
  runner: Runner;
  /** the embedded mock vendor's name, when $CLIBROKER_MOCK_VENDOR started one */
  mockVendor?: string;
  close(): Promise<void>;
}

/**
 * Start a broker in this process, and — for demos and tests only — the embedded mock vendor
 * named by $CLIBROKER_MOCK_VENDOR (`github`), with every host mapped to it. The mock checks
 * that the connection's own secret arrived, so a passing call proves the stamping.
 */
export async function startEngine(
  store: Store,
  connection: Connection,
  env: Env = process.env,
): Promise<Engine> {
  const [{ createBroker }, { createRunner }] = await Promise.all([
    import('../broker/broker.js'),
    import('../runs/runner.js'),
  ]);
  const mock = env[ENV.mockVendor];
  let vendor:
    | { caPem: string; resolve(host: string): { host: string; port: number }; close(): Promise<void> }
    | undefined;
  if (mock) {
    if (mock !== 'github')
      fail('runtime', `${ENV.mockVendor}=${echo(mock, 60)} names no embedded mock vendor`, {
        code: 'COMMAND_INPUT_INVALID',
        got: mock,
        expected: 'github',
      });
    const [{ startMockVendor }, { githubVendor }, { connectionSecrets }] = await Promise.all([
      import('../mockvendor/server.js'),
      import('../mockvendor/github.js'),
      import('../credentials/types.js'),
    ]);
    vendor = await startMockVendor(githubVendor({ token: connectionSecrets(connection)[0] ?? '' }));
  }
  const broker = await createBroker(
    vendor
      ? { upstream: { ca: vendor.caPem, resolve: vendor.resolve, allowAddresses: ['127.0.0.0/8'] } }
      : {},
  );
  return {
    runner: createRunner({ broker, store }),
    ...(mock ? { mockVendor: mock } : {}),
    async close() {
      await broker.close();
      await vendor?.close();
    },
  };
}

// ── Approvals ────────────────────────────────────────────────────────────────────

/** APPROVAL_NOT_FOUND as a runtime envelope that says where to look. */
export function approvalNotFound(id: string, flag: string): never {
  return fail('runtime', errorMessage('APPROVAL_NOT_FOUND', { id: echo(id, 60), where: 'store' }), {
    code: 'APPROVAL_NOT_FOUND',
    flag,
    got: id,
    hint: 'list them with clibroker approvals list --status pending (and check --store)',
  });
}

/** A person approves or rejects; the store's catalogue errors get messages that name the state. */
export async function decideApproval(store: Store, id: string, to: 'approve' | 'reject', who: string) {
  try {
    return to === 'approve' ? await store.approve(id, who) : await store.reject(id, who);
  } catch (e) {
    if (e instanceof BrokerError && e.code === 'APPROVAL_NOT_FOUND') approvalNotFound(id, 'id');
    if (e instanceof BrokerError && e.code === 'APPROVAL_NOT_PENDING') {
      const status = String(e.details?.['status'] ?? 'decided');
      fail('runtime', errorMessage('APPROVAL_NOT_PENDING', { id: echo(id, 60), status, to }), {
        code: 'APPROVAL_NOT_PENDING',
        flag: 'id',
        got: id,
        hint:
          status === 'rejected'
            ? 'a rejected approval can never be approved; run the command again to ask anew'
            : `see it with clibroker approvals show --id ${echo(id, 60)}`,
      });
    }
    throw e;
  }
}

// ── The run spec: what `vendor resume` needs besides the connection ──────────────────

/** Everything to run the same command again, minus the connection. Written only for a paused run. */
export interface RunSpec {
  v: 1;
  runId: string;
  createdAt: string;
  /** the validated manifest itself (manifests hold no secrets), so a later edit of the file cannot change what resumes */
  extension: ExtensionManifest;
  cli: string;
  args: string[];
  stdin?: string;
  endpoint?: string;
  tier: {
    requested?: Tier;
    organizationCeiling: Tier;
    identity: 'assigned' | 'linked';
    assignment: string;
    assignmentAllow?: Tier;
  };
  context: ApprovalContext;
  deadlineMs: number;
}

/** `<store>.runs/`, mode 0700: one `<runId>.json` (mode 0600) per paused run. */
export function specDir(store: string): string {
  return `${store}.runs`;
}

function specFile(store: string, runId: string): string {
  if (!/^[A-Za-z0-9-]{1,64}$/.test(runId)) throw new Error(`run id '${runId}' cannot name a file`);
  return join(specDir(store), `${runId}.json`);
}

/** Write atomically (temp file, then rename) so a crash never leaves half a spec. */
export function saveRunSpec(store: string, spec: RunSpec): void {
  mkdirSync(specDir(store), { recursive: true, mode: 0o700 });
  const file = specFile(store, spec.runId);
  const tmp = `${file}.${randomUUID()}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(spec)}\n`, { mode: 0o600, flag: 'wx' });
  renameSync(tmp, file);
}

export function loadRunSpec(store: string, runId: string): RunSpec | undefined {
  let text: string;
  try {
    text = readFileSync(specFile(store, runId), 'utf8');
  } catch {
    return undefined;
  }
  let spec: RunSpec;
  try {
    spec = JSON.parse(text) as RunSpec;
  } catch {
    return undefined; // a damaged spec is no spec; JSON.parse's message would quote the file
  }
  return spec.v === 1 && spec.runId === runId ? spec : undefined;
}

export function removeRunSpec(store: string, runId: string): void {
  rmSync(specFile(store, runId), { force: true });
}

// ── vendor run / vendor resume ───────────────────────────────────────────────────────

/** The flags of `vendor run`, as validated. */
export interface VendorRunParams {
  manifest: Record<string, unknown>;
  cli: string;
  args: string[];
  stdin?: string;
  tier?: Tier;
  context: ApprovalContext;
  organizationCeiling: Tier;
  assignmentAllow?: Tier;
  assignment: string;
  identity: 'assigned' | 'linked';
  endpoint?: string;
  deadline: number;
  store?: string;
  connectionFile?: string;
}

/** What `vendor run|resume` answers: the run's data, plus whether a mock vendor served it. */
export type VendorRunData = RunData & { mockVendor?: string };

async function inputFromSpec(store: Store, spec: RunSpec, connection: Connection): Promise<RunInput> {
  // The store's switch is the audited gate (raised only by a person, `tiers set`); the flag can lower it, never raise it.
  const switched = await store.getAssignmentTier({
    extensionId: spec.extension.id,
    assignmentId: spec.tier.assignment,
  });
  const assignmentAllow: Tier =
    spec.tier.assignmentAllow === 'read' || switched === 'read' ? 'read' : 'write';
  return {
    extension: spec.extension,
    cli: spec.cli,
    args: spec.args,
    ...(spec.stdin !== undefined ? { stdin: spec.stdin } : {}),
    connection,
    ...(spec.endpoint !== undefined ? { endpoint: spec.endpoint } : {}),
    tier: {
      ...(spec.tier.requested ? { requested: spec.tier.requested } : {}),
      organizationCeiling: spec.tier.organizationCeiling,
      assignmentAllow,
      identity: spec.tier.identity,
    },
    // the approver sees the same tool and arguments as for the `<id>_cli` gadget
    context: { kind: spec.context, tool: `${spec.cli}_cli`, toolArgs: { args: spec.args } },
    runId: spec.runId,
    deadlineMs: spec.deadlineMs,
  };
}

function withMock(data: RunData, engine: Engine): VendorRunData {
  return engine.mockVendor ? { ...data, mockVendor: engine.mockVendor } : data;
}

/** `clibroker vendor run`. */
export async function vendorRun(p: VendorRunParams, program = 'clibroker'): Promise<VendorRunData> {
  const { parseExtensionManifest } = await import('../manifest/define.js');
  const extension = parseExtensionManifest(p.manifest);
  const connection = loadConnection(p.connectionFile);
  return withStore(p.store, true, async (store, path) => {
    const spec: RunSpec = {
      v: 1,
      runId: randomUUID(),
      createdAt: new Date().toISOString(),
      extension,
      cli: p.cli,
      args: p.args,
      ...(p.stdin !== undefined ? { stdin: p.stdin } : {}),
      ...(p.endpoint !== undefined ? { endpoint: p.endpoint } : {}),
      tier: {
        ...(p.tier ? { requested: p.tier } : {}),
        organizationCeiling: p.organizationCeiling,
        identity: p.identity,
        assignment: p.assignment,
        ...(p.assignmentAllow ? { assignmentAllow: p.assignmentAllow } : {}),
      },
      context: p.context,
      deadlineMs: p.deadline * 1000,
    };
    const engine = await startEngine(store, connection);
    try {
      const result = await engine.runner.run(await inputFromSpec(store, spec, connection));
      if (result.status === 'paused' && path !== ':memory:') {
        try {
          saveRunSpec(path, spec);
        } catch (e) {
          throw new Error(
            `run ${spec.runId} paused on approval ${result.approval.id}, but its run spec could not be saved under ${specDir(path)} (${(e as Error).message}); it cannot be resumed`,
          );
        }
      }
      return withMock(runData(result, program), engine);
    } finally {
      await engine.close();
    }
  });
}

/** `clibroker vendor resume`: the same command again, once, with the approved request allowed. */
export async function vendorResume(
  p: { approval: string; store?: string; connectionFile?: string },
  program = 'clibroker',
): Promise<VendorRunData> {
  return withStore(p.store, false, async (store, path) => {
    const approval = await store.getApproval(p.approval);
    if (!approval) return approvalNotFound(p.approval, 'approval');
    // the runner checks these again; checked first here so the answer names the approval's state, not a missing spec
    if (approval.status === 'rejected') {
      removeRunSpec(path, approval.runId);
      throw brokerError('EXEC_ACTION_CONFIRMATION_DECLINED', { approval });
    }
    if (approval.status !== 'approved') {
      fail('runtime', errorMessage('APPROVAL_NOT_PENDING', { id: approval.id, status: approval.status }), {
        code: 'APPROVAL_NOT_PENDING',
        flag: 'approval',
        got: approval.id,
        hint:
          approval.status === 'pending'
            ? `a person approves it first: clibroker approvals approve --id ${approval.id} --by <who>`
            : 'an approval runs once; run the command again with vendor run',
      });
    }
    const spec = loadRunSpec(path, approval.runId);
    if (!spec) {
      fail(
        'runtime',
        `run ${approval.runId} of approval ${approval.id} has no run spec under ${specDir(path)}`,
        {
          code: 'APPROVAL_NOT_FOUND',
          hint: "only a run paused by 'clibroker vendor run' with this --store can be resumed here; a host that called the runner itself resumes it with runner.resume",
        },
      );
    }
    const shown = (approval.toolArgs as { args?: unknown } | null)?.args;
    if (JSON.stringify(shown) !== JSON.stringify(spec.args) || approval.tool !== `${spec.cli}_cli`) {
      fail(
        'runtime',
        `the run spec of run ${approval.runId} does not match what approval ${approval.id} showed the reviewer; refusing to resume`,
        {
          hint: `the spec under ${specDir(path)} was changed; run the command again with 'clibroker vendor run'`,
        },
      );
    }
    const connection = loadConnection(p.connectionFile);
    const engine = await startEngine(store, connection);
    try {
      const result = await engine.runner.resume(approval.id, await inputFromSpec(store, spec, connection));
      // a resumed run that paused again (another destructive request) keeps the same run id and spec
      if (result.status !== 'paused') removeRunSpec(path, spec.runId);
      return withMock(runData(result, program), engine);
    } finally {
      await engine.close();
    }
  });
}
