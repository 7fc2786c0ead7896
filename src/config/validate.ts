/**
 * What `clibroker config validate` shows: the tools a configuration offers and what an
 * operator should know about it, or every problem that refuses it.
 *
 * It checks as the strictest consumer asked for (`daemon` by default): the loader's own
 * checks with `serving` semantics (no plain image), then what that consumer refuses at start
 * beyond the loader — the `daemon` block `clibroker daemon` needs, and a store it can open
 * (SQLite: the driver loadable, the store's file and directory usable by this process;
 * PostgreSQL: the database opened as a host opens it, through the caller's `probeStore`).
 */
import { access, constants, readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, resolve } from 'node:path';
import { brokerError, isBrokerError } from '../errors.js';
import { loadConfig } from './load.js';
import { storeStringProblem } from './schema.js';
import type { ConfigProblem, ConfiguredTool, LoadedConfig, WithheldTool } from './types.js';

/** Something allowed that an operator should decide on knowingly. */
export interface ConfigWarning {
  path: string;
  message: string;
}

/**
 * Who the configuration is checked for: `daemon` (`clibroker daemon`: serving, a daemon block
 * required), `serve` (`clibroker serve`: serving), `host` (an in-process host: plain images allowed).
 */
export type ConfigConsumer = 'daemon' | 'serve' | 'host';

export const CONFIG_CONSUMERS: readonly ConfigConsumer[] = ['daemon', 'serve', 'host'];

export interface ConfigValidation {
  valid: true;
  file: string;
  /** the consumer whose start-up checks were applied */
  checkedFor: ConfigConsumer;
  tools: { id: string; name: string; image: string; profile: string }[];
  withheld: WithheldTool[];
  warnings: ConfigWarning[];
}

export interface ValidateOptions {
  /** default `daemon`, the strictest */
  for?: ConfigConsumer;
  /** where secrets in variables are read; default process.env */
  env?: Record<string, string | undefined>;
  /** tests: why the SQLite driver cannot open a database (default: load better-sqlite3 and open one in memory) */
  probeSqliteDriver?: () => Promise<string | undefined>;
  /**
   * The conformance gate, when some offered tool's image requires a verdict: given the tools
   * offered so far and the configuration's store, those it still offers and those it
   * withholds. Supplied by the caller (the gate reads the store, a layer this one does not
   * use); absent, no tool is withheld for conformance.
   */
  conformance?: (
    tools: readonly ConfiguredTool[],
    config: LoadedConfig,
  ) => Promise<{ offered: ConfiguredTool[]; withheld: WithheldTool[] }>;
  /**
   * Why the configuration's PostgreSQL store would not open as the consumer opens it at start
   * (unreachable, its schema behind: STORE_SCHEMA_OUTDATED), or undefined when it opens.
   * Supplied by the caller (opening it is the store's layer); absent, the database is not tried.
   */
  probeStore?: (config: LoadedConfig) => Promise<ConfigProblem | undefined>;
}

/** The warnings of a loaded configuration. */
export function configWarnings(c: LoadedConfig): ConfigWarning[] {
  const out: ConfigWarning[] = [];
  // a qualified name is one an agent (and its prompts) may not expect
  for (const t of c.tools)
    if (t.name !== `${t.cliId}_cli`)
      out.push({
        path: `extensions.${t.extensionId}`,
        message: `another installed CLI is also ${t.cliId}_cli: this one is offered as ${t.name}`,
      });
  const used = new Set(c.tools.map((t) => t.image.name));
  for (const img of c.images.values()) {
    const at = `images.${img.name}`;
    if (!used.has(img.name)) out.push({ path: at, message: 'no installed CLI runs this image' });
    if (img.conformance === 'waived')
      out.push({
        path: `${at}.conformance`,
        message:
          'waived: its CLIs are offered without a passing conformance verdict, so nothing has shown that the broker can govern this program',
      });
    if (img.profile !== 'plain') continue;
    out.push({
      path: `${at}.profile`,
      message:
        "the CLI runs with this process's own file access: it could read the configuration and secret files; use profile isolated where bubblewrap is available",
    });
    if (img.readOnlyPaths.length > 0)
      out.push({ path: `${at}.readOnlyPaths`, message: 'readOnlyPaths apply to the isolated profile only' });
  }
  if (c.store === ':memory:')
    out.push({
      path: 'store',
      message: 'an in-memory store: approvals, tier switches and audit events are lost when the process ends',
    });
  return out;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const errno = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? 'error';

/** The configuration file as JSON, or undefined when it cannot be read (the loader reports that). */
async function readRaw(file: string): Promise<Obj | undefined> {
  try {
    const v: unknown = JSON.parse(await readFile(file, 'utf8'));
    return isObj(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why the SQLite driver cannot open a database here, or undefined when it can: better-sqlite3
 * (an optional peer dependency) required as src/store requires it, and one in-memory database
 * opened, which loads its compiled part. Loaded here rather than through src/store, which
 * this layer does not import.
 */
async function sqliteDriverProblem(): Promise<string | undefined> {
  let Driver: new (path: string) => { close(): void };
  try {
    Driver = createRequire(import.meta.url)('better-sqlite3');
  } catch (e) {
    const absent = (e as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND';
    return `better-sqlite3 ${absent ? 'is not installed' : 'cannot be loaded'} here: npm install better-sqlite3 next to clibroker${absent ? '' : ', or npm rebuild better-sqlite3'}`;
  }
  try {
    new Driver(':memory:').close();
    return undefined;
  } catch (e) {
    return `better-sqlite3 is installed without a working compiled part (${(e as Error).message.split('\n')[0]?.slice(0, 160)}): npm rebuild better-sqlite3`;
  }
}

/**
 * What stops the configured store from opening, as the daemon and a host open it
 * (`createHost`: its directory created with mode 0700 when missing, then the SQLite file
 * opened in WAL mode, which creates `-wal` and `-shm` beside it). Nothing is created here.
 */
export async function storeProblems(
  rawStore: unknown,
  baseDir: string,
  probeDriver: () => Promise<string | undefined> = sqliteDriverProblem,
): Promise<ConfigProblem[]> {
  // the object form is PostgreSQL: its URL reference is the loader's to check, the database the caller's (probeStore)
  if (typeof rawStore !== 'string' || rawStore === '') return [];
  const out: ConfigProblem[] = [];
  const add = (message: string) => out.push({ path: 'store', code: 'CONFIG_FIELD_INVALID', message });
  // a URL or another scheme is the loader's shape problem (never a file named after it)
  if (storeStringProblem(rawStore) !== undefined) return out;
  const driver = await probeDriver();
  // the catalogue's code for this, as the store itself would throw it at start
  if (driver !== undefined)
    out.push({
      path: 'store',
      code: 'STORE_DRIVER_MISSING',
      message: `the SQLite store cannot be opened: ${driver}`,
    });
  if (rawStore === ':memory:') return out;
  const path = isAbsolute(rawStore) ? rawStore : resolve(baseDir, rawStore);
  try {
    const st = await stat(path);
    if (!st.isFile()) add(`${path} exists and is not a regular file`);
    else
      await access(path, constants.R_OK | constants.W_OK).catch((e: unknown) =>
        add(`${path} cannot be read and written by this process (${errno(e)})`),
      );
  } catch (e) {
    // ENOTDIR: a file where its directory should be, reported with the directory below
    if (errno(e) !== 'ENOENT' && errno(e) !== 'ENOTDIR') add(`${path} cannot be examined (${errno(e)})`);
  }
  // the nearest directory that exists must let this process create the file, its -wal and -shm (or the missing directories)
  let dir = dirname(path);
  for (;;) {
    try {
      const st = await stat(dir);
      if (!st.isDirectory()) add(`${dir} is not a directory, so the store ${path} cannot be created`);
      else
        await access(dir, constants.W_OK | constants.X_OK).catch((e: unknown) =>
          add(
            `${dir} is not writable by this process (${errno(e)}): the store ${path} and its -wal and -shm files are created there`,
          ),
        );
      break;
    } catch (e) {
      if (errno(e) !== 'ENOENT') {
        add(`${dir} cannot be examined (${errno(e)})`);
        break;
      }
      const up = dirname(dir);
      if (up === dir) break;
      dir = up;
    }
  }
  return out;
}

/** What the consumer refuses at start beyond the loader's checks. */
async function consumerProblems(
  raw: Obj | undefined,
  file: string,
  consumer: ConfigConsumer,
  probeDriver?: () => Promise<string | undefined>,
): Promise<ConfigProblem[]> {
  if (raw === undefined) return [];
  const out: ConfigProblem[] = [];
  if (consumer === 'daemon' && !isObj(raw['daemon']))
    out.push({
      path: 'daemon',
      code: 'CONFIG_FIELD_INVALID',
      message:
        'missing: clibroker daemon needs at least {"socket": "/run/clibroker/broker.sock"} (validate with --for serve or --for host for another consumer)',
    });
  if (consumer === 'daemon' && isObj(raw['daemon']))
    out.push(...(await socketDirProblems(raw['daemon']['socket'])));
  out.push(...(await storeProblems(raw['store'], dirname(file), probeDriver)));
  return out;
}

/**
 * What `clibroker daemon` refuses at start about its socket's directory (src/daemon/socket.ts,
 * a layer above this one): one that a user other than the daemon's and root could write, or
 * a directory above it that such a user could (sshd's StrictModes rule; a sticky directory
 * above is fine). The daemon's user is this process's; run as root, the directory's owner.
 * A missing directory is not a problem here: systemd's RuntimeDirectory creates it at start
 * (a warning says so).
 */
async function socketDirProblems(socket: unknown): Promise<ConfigProblem[]> {
  if (typeof socket !== 'string' || !isAbsolute(socket)) return []; // the loader's problem
  const dir = dirname(socket);
  let st: Awaited<ReturnType<typeof stat>>;
  try {
    st = await stat(dir);
  } catch (e) {
    if (errno(e) === 'ENOENT') return [];
    return [
      {
        path: 'daemon.socket',
        code: 'CONFIG_FIELD_INVALID',
        message: `its directory ${dir} cannot be examined (${errno(e)}): the daemon refuses to start`,
      },
    ];
  }
  if (!st.isDirectory())
    return [{ path: 'daemon.socket', code: 'CONFIG_FIELD_INVALID', message: `${dir} is not a directory` }];
  const me = process.getuid?.();
  if (me === undefined) return [];
  const { looseAncestors } = await import('./path-trust.js');
  return (await looseAncestors(socket, me === 0 ? st.uid : me)).map((l) => ({
    path: 'daemon.socket',
    code: 'DEPLOY_SOCKET_DIR_UNSAFE',
    message: `${l.directory} ${l.why}, so another user could put an impostor at the socket; the daemon refuses to start. Make its directory the daemon user's, group agents, mode 2750, under directories only root can write`,
  }));
}

/** The loaded configuration when it loads, and every problem found. */
export interface ConfigCheck {
  file: string;
  checkedFor: ConfigConsumer;
  loaded?: LoadedConfig;
  problems: ConfigProblem[];
}

/**
 * Load `file` as `consumer` would (serving for `daemon` and `serve`) and add what it refuses
 * at start. Never throws CONFIG_INVALID: its problems are in the list.
 */
export async function checkConfigFile(file: string, opts: ValidateOptions = {}): Promise<ConfigCheck> {
  const consumer = opts.for ?? 'daemon';
  const abs = resolve(file);
  const problems: ConfigProblem[] = [];
  let loaded: LoadedConfig | undefined;
  try {
    loaded = await loadConfig(abs, {
      serving: consumer !== 'host',
      ...(opts.env !== undefined ? { env: opts.env } : {}),
    });
  } catch (e) {
    if (!(isBrokerError(e) && e.code === 'CONFIG_INVALID')) throw e;
    problems.push(...((e.details?.['problems'] ?? []) as ConfigProblem[]));
  }
  problems.push(...(await consumerProblems(await readRaw(abs), abs, consumer, opts.probeSqliteDriver)));
  // a PostgreSQL store is checked the only way it can be: opened as the consumer opens it
  if (loaded?.storePostgres && opts.probeStore) {
    const p = await opts.probeStore(loaded);
    if (p) problems.push(p);
  }
  return { file: abs, checkedFor: consumer, ...(loaded ? { loaded } : {}), problems };
}

/** The most an envelope's `details` holds as JSON (the CLI drops larger ones whole), with room to spare. */
const DETAILS_BUDGET = 7000;
/** The most entries of a list an envelope's `details` keeps. */
const LIST_MAX = 32;

/**
 * Problems fit for an envelope's `details`: at most 32, their messages shortened until the
 * whole fits, with `count` the number found (so a cut list still says how many there were).
 */
export function fitProblems<P extends { message: string }>(
  problems: readonly P[],
  extra: Obj = {},
): { problems: P[]; count: number } & Obj {
  const kept = problems.slice(0, LIST_MAX);
  for (const max of [200, 160, 120, 80, 48, 24]) {
    const cut = kept.map((p) =>
      p.message.length <= max ? p : { ...p, message: `${p.message.slice(0, max)}…` },
    );
    const details = { ...extra, count: problems.length, problems: cut };
    if (JSON.stringify(details).length <= DETAILS_BUDGET) return details;
  }
  return { ...extra, count: problems.length, problems: kept.slice(0, 8).map((p) => ({ ...p, message: '' })) };
}

/**
 * The tools a host offers here, as `offeredTools` in src/host decides (that layer is above
 * this one): a configured isolated image never falls back to plain, so where bubblewrap
 * cannot run its CLIs are withheld (TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE).
 */
async function offeredHere(
  c: LoadedConfig,
): Promise<{ offered: LoadedConfig['tools'][number][]; withheld: WithheldTool[] }> {
  const withheld: WithheldTool[] = [...c.withheld];
  if (!c.tools.some((t) => t.image.profile === 'isolated')) return { offered: [...c.tools], withheld };
  const { isolationUnavailable } = await import('../sandbox/isolated.js');
  const why = await isolationUnavailable();
  if (why === undefined) return { offered: [...c.tools], withheld };
  const offered = c.tools.filter((t) => t.image.profile !== 'isolated');
  for (const t of c.tools)
    if (t.image.profile === 'isolated')
      withheld.push({
        id: t.id,
        name: t.name,
        code: 'TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE',
        message: `image ${t.image.name} asks for the isolated profile, which cannot run here: ${why}`,
      });
  return { offered, withheld };
}

/**
 * Load `file` and describe it as `opts.for` (default `daemon`) would start with it.
 * @throws BrokerError CONFIG_INVALID with `details.problems` (every problem, messages fit for
 *   an envelope), `details.count` and `details.checkedFor`; any other failure as it came
 */
export async function validateConfigFile(
  file: string,
  opts: ValidateOptions = {},
): Promise<ConfigValidation> {
  const check = await checkConfigFile(file, opts);
  const c = check.loaded;
  if (c === undefined || check.problems.length > 0) {
    throw brokerError(
      'CONFIG_INVALID',
      {
        what: `the configuration ${check.file} (checked as ${check.checkedFor === 'host' ? 'a host' : `clibroker ${check.checkedFor}`} starts)`,
        problems: check.problems,
        shown: 3,
      },
      { details: fitProblems(check.problems, { checkedFor: check.checkedFor }) },
    );
  }
  const warnings = configWarnings(c);
  if (check.checkedFor === 'daemon' && c.daemon) {
    const dir = dirname(c.daemon.socket);
    if (
      !(await stat(dir).then(
        () => true,
        () => false,
      ))
    )
      warnings.push({
        path: 'daemon.socket',
        message: `its directory ${dir} does not exist now: the daemon refuses to start unless it exists then (systemd's RuntimeDirectory creates it), owned by the daemon's user, group agents, mode 2750`,
      });
  }
  const st = await stat(c.file ?? check.file);
  if ((st.mode & 0o022) !== 0) {
    warnings.unshift({
      path: '(root)',
      message: `the configuration file has mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}: group or other may rewrite it (its pins, its secret references); chmod go-w it`,
    });
  }
  let { offered, withheld } = await offeredHere(c);
  if (opts.conformance && offered.some((t) => t.image.conformance === 'required')) {
    const gated = await opts.conformance(offered, c);
    offered = gated.offered;
    withheld = [...withheld, ...gated.withheld];
  }
  return {
    valid: true,
    file: c.file ?? check.file,
    checkedFor: check.checkedFor,
    tools: offered.map((t) => ({ id: t.id, name: t.name, image: t.image.name, profile: t.image.profile })),
    withheld,
    warnings,
  };
}
