/**
 * Where the bundled commands' store lives and how it is opened: `--store`, the `store` of a
 * `--config`, $CLIBROKER_STORE or ~/.clibroker/store.db; SQLite or a postgres:// URL.
 *
 * Loaded only by a command's `run` (a dynamic import), like every back-end of the bundled
 * commands: `--help` never pays for the broker, the runner, the store or SQLite.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { Store } from '../store/types.js';
import { isPostgresUrl, redactStoreUrl } from '../store/url.js';
import { ENV, type Env } from './env.js';
import { echo, fail } from './envelope.js';

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
