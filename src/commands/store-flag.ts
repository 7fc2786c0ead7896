/**
 * Where the bundled commands' store lives and how it is opened: `--store`, the `store` of a
 * `--config`, $CLIBROKER_STORE or ~/.clibroker/store.db; SQLite or a postgres:// URL.
 *
 * Loaded only by a command's `run` (a dynamic import), like every back-end of the bundled
 * commands: `--help` never pays for the broker, the runner, the store or SQLite.
 */
import { createHash } from 'node:crypto';
import { closeSync, constants, existsSync, fstatSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { Store } from '../store/types.js';
import { isPostgresUrl, redactStoreUrl } from '../store/url.js';
import { ENV, type Env } from './env.js';
import { echo, fail } from '../cli/envelope.js';

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
    return { store: await open(path, configuredOptions.get(path) ?? {}), path: anchor };
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
 * is read: an operator approving a request needs no other secret to be present. For
 * `{"postgres": {"env"|"file": …}}` the URL is read from its reference now (a file relative to
 * the configuration, with the loader's rules: a regular file, no group or other mode bits) and
 * returned; it is a secret, so it is shown only through `redactStoreUrl`.
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
  const expected =
    '"store": "<path of the SQLite store>" or "store": {"postgres": {"env": "NAME"} | {"file": "PATH"}}';
  if (typeof store === 'object' && store !== null && !Array.isArray(store)) {
    const opts = store as Record<string, unknown>;
    const url = configuredPostgresUrl(opts['postgres'], p.config);
    const window = opts['reconnectWindowSeconds'];
    const pool = opts['poolSize'];
    configuredOptions.set(url, {
      ...(typeof pool === 'number' && Number.isInteger(pool) && pool >= 1 && pool <= 100
        ? { poolSize: pool }
        : {}),
      ...(typeof window === 'number' && window >= 0 && window <= 300
        ? { reconnectWindowMs: window * 1000 }
        : {}),
    });
    return url;
  }
  if (typeof store !== 'string' || store === '')
    fail('flag-parse', `the configuration ${echo(p.config, 100)} names no store`, {
      flag: 'config',
      got: p.config,
      expected,
    });
  // as the loader refuses it: a URL or another scheme is never a file named after it (and never shown)
  if (store !== ':memory:' && /^[A-Za-z][A-Za-z0-9+.-]+:/.test(store))
    fail(
      'flag-parse',
      `the configuration ${echo(p.config, 100)} names its store as a URL (not shown), which clibroker config validate refuses`,
      { flag: 'config', got: p.config, expected },
    );
  return store === ':memory:' || isAbsolute(store) ? store : resolve(dirname(p.config), store);
}

/** A PostgreSQL store's options from the configuration that named its URL (pool size, reconnect window). */
const configuredOptions = new Map<string, { poolSize?: number; reconnectWindowMs?: number }>();

/** The pool size and reconnect window of the configuration `storeFlag` read this URL from; {} otherwise. */
export function configuredPostgresOptions(location: string): {
  poolSize?: number;
  reconnectWindowMs?: number;
} {
  return configuredOptions.get(location) ?? {};
}

/** Files above this size are not a secret someone meant to reference (the loader's bound). */
const MAX_SECRET_BYTES = 64 * 1024;

/**
 * The URL a configuration's `store.postgres` reference holds, read as the loader reads a
 * secret: a variable set and not empty; a regular file, with no group or other mode bits,
 * relative to the configuration. Refusals name the reference, never the value.
 */
function configuredPostgresUrl(ref: unknown, config: string): string {
  const refuse = (why: string, code = 'CONFIG_SECRET_MISSING'): never =>
    fail('runtime', `the configuration's store.postgres ${why}`, {
      code,
      flag: 'config',
      got: config,
      hint: 'clibroker config validate --config <file> checks the configuration and its secrets',
    });
  let value: string | undefined;
  if (typeof ref === 'object' && ref !== null && typeof (ref as { env?: unknown }).env === 'string') {
    const name = (ref as { env: string }).env;
    value = process.env[name];
    if (value === undefined || value === '')
      refuse(`names the variable ${echo(name, 64)}, which is ${value === undefined ? 'not set' : 'empty'}`);
  } else if (
    typeof ref === 'object' &&
    ref !== null &&
    typeof (ref as { file?: unknown }).file === 'string'
  ) {
    const file = resolve(dirname(config), (ref as { file: string }).file);
    let fd: number;
    try {
      // non-blocking: a FIFO in the secret's place must not hang the command
      fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch (e) {
      return refuse(
        `names the file ${echo(file, 100)}, which cannot be opened (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) refuse(`names ${echo(file, 100)}, which is not a regular file`);
      if ((st.mode & 0o077) !== 0)
        refuse(
          `names the file ${echo(file, 100)}, which has mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}: group or other may access it; chmod 600 it`,
          'CONFIG_SECRET_FILE_MODE',
        );
      if (st.size > MAX_SECRET_BYTES)
        refuse(`names ${echo(file, 100)}, which is too large to be a secret file`);
      value = readFileSync(fd, 'utf8').replace(/[\r\n]+$/, '');
    } finally {
      closeSync(fd);
    }
    if (value === '') refuse(`names the file ${echo(file, 100)}, which is empty`);
  } else {
    refuse(
      'is not a secret reference: write {"postgres": {"env": "NAME"}} or {"postgres": {"file": "PATH"}}',
      'CONFIG_INVALID',
    );
  }
  if (!isPostgresUrl(value!))
    refuse('reference holds no postgres:// or postgresql:// URL (not shown)', 'CONFIG_INVALID');
  return value!;
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
