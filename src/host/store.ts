/**
 * The configuration's store, opened the one way every consumer opens it: `createHost` (so
 * `clibroker daemon` and `clibroker serve`), `clibroker config validate`'s checks and
 * `clibroker conformance --config`.
 *
 *   SQLite: its directory made (mode 0700) when missing, the file opened and migrated
 *   PostgreSQL: the URL read from its secret reference now, the pool opened with the
 *   configuration's size and reconnect window, the schema checked but never migrated
 *   (behind: STORE_SCHEMA_OUTDATED; `clibroker store migrate --config` migrates it)
 *
 * Both with the configuration's retention (`storeRetention.days`): pruned now and hourly, a
 * failed prune heard by `onRetentionError`.
 */
import type { Logger } from 'pino';
import type { LoadedConfig } from '../config/types.js';
import type { Store } from '../store/types.js';

/** How `openConfiguredStore` opens the configuration's store. */
export interface ConfiguredStoreOptions {
  /** hears a failed periodic prune; default: logged to `logger` */
  logger?: Logger;
  /** the environment a `{"env": …}` URL is read from; default process.env */
  env?: Record<string, string | undefined>;
  /** prune with the configuration's retention (default true); false for a look at the store only */
  retention?: boolean;
  /** SQLite: make the store's directory when missing (default true) */
  create?: boolean;
}

/**
 * Open the store the configuration names.
 * @throws BrokerError CONFIG_SECRET_UNAVAILABLE (the URL's variable or file cannot be read),
 *   STORE_SCHEMA_OUTDATED (a PostgreSQL schema behind this build), STORE_UNAVAILABLE,
 *   STORE_SCHEMA_UNSUPPORTED, STORE_DRIVER_MISSING, or whatever the store's open throws
 */
export async function openConfiguredStore(
  config: Pick<LoadedConfig, 'store' | 'storePostgres' | 'storeRetentionDays'>,
  opts: ConfiguredStoreOptions = {},
): Promise<Store> {
  const days = opts.retention === false ? undefined : config.storeRetentionDays;
  const retention =
    days === undefined
      ? {}
      : {
          retentionDays: days,
          onRetentionError: (err: unknown) =>
            opts.logger?.error({ err }, 'clibroker: audit events not pruned'),
        };
  const pg = config.storePostgres;
  if (pg !== undefined) {
    // read once, now: the pool keeps this URL, so a rotated password takes effect at the next start
    const [{ readSecret }, { openPostgresStore }] = await Promise.all([
      import('../config/secrets.js'),
      import('../store/load-postgres.js').then((m) => m.loadPostgresStore()),
    ]);
    const url = await readSecret(pg.url, opts.env ?? process.env, 'store.postgres');
    return openPostgresStore(url, {
      migrate: false,
      poolSize: pg.poolSize,
      reconnectWindowMs: pg.reconnectWindowMs,
      ...retention,
    });
  }
  const path = config.store;
  if (path !== ':memory:' && opts.create !== false) {
    const [{ mkdirSync }, { dirname }] = await Promise.all([import('node:fs'), import('node:path')]);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  }
  const { openSqliteStore } = await import('../store/sqlite.js');
  return openSqliteStore(path, retention);
}
