/**
 * One entry for both backends: a postgres:// or postgresql:// URL opens the PostgreSQL store
 * (its module, and `pg`, load only then); anything else is a SQLite path or ':memory:'.
 */
import { loadPostgresStore } from './load-postgres.js';
import type { PostgresStoreOptions } from './postgres.js';
import { openSqliteStore, type SqliteStoreOptions } from './sqlite.js';
import type { Store } from './types.js';
import { isPostgresUrl } from './url.js';

/** What `openStore` takes: the SQLite options and the PostgreSQL ones (each backend reads its own). */
export type OpenStoreOptions = SqliteStoreOptions & PostgresStoreOptions;

/** Open the store `location` names: a SQLite file path, ':memory:', or a PostgreSQL URL. */
export async function openStore(location: string, opts: OpenStoreOptions = {}): Promise<Store> {
  if (isPostgresUrl(location)) {
    const { openPostgresStore } = await loadPostgresStore();
    return openPostgresStore(location, opts);
  }
  return openSqliteStore(location, opts);
}
