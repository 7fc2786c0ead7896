/**
 * `clibroker store migrate`: bring a store's schema up to this build's. A PostgreSQL
 * database shared by several brokers is migrated only by this command (a broker that finds
 * it behind refuses to start with STORE_SCHEMA_OUTDATED); a SQLite file is also migrated
 * whenever it is opened. An operator's job: `agent manifest` leaves it out.
 */
import { defineTool } from '../define.js';

export const storeMigrate = defineTool({
  namespace: 'store',
  name: 'migrate',
  description:
    "Apply the store's pending schema migrations (idempotent: a second run applies nothing). Needed before brokers use a new or upgraded PostgreSQL database; a database at a newer version is refused.",
  parameters: {
    store: {
      type: 'string',
      optional: true,
      describe:
        'a postgres:// URL (the password is never printed) or a SQLite file that exists; default $CLIBROKER_STORE, else ~/.clibroker/store.db',
    },
  },
  examples: [
    {
      params: { store: 'postgres://clibroker@db.internal:5432/clibroker' },
      comment: 'once per upgrade, before the brokers start',
      output: {
        store: 'postgres://clibroker@db.internal:5432/clibroker',
        backend: 'postgres',
        applied: [1],
        version: 1,
      },
    },
  ],
  outputShape:
    "{store: string (password redacted), backend: 'postgres'|'sqlite', applied: number[], version: number}",
  async run(p) {
    const [{ storePath }, { isPostgresUrl, redactStoreUrl }] = await Promise.all([
      import('../store-flag.js'),
      import('../../store/url.js'),
    ]);
    const location = storePath(p.store);
    const shown = redactStoreUrl(location);
    if (isPostgresUrl(location)) {
      const { openPostgresStore } = await import('../../store/postgres.js');
      const store = await openPostgresStore(location, { migrate: true });
      try {
        return {
          store: shown,
          backend: 'postgres',
          applied: store.applied,
          version: await store.schemaVersion(),
        };
      } finally {
        await store.close();
      }
    }
    const [{ existsSync }, { fail, echo }] = await Promise.all([import('node:fs'), import('../envelope.js')]);
    if (location === ':memory:' || !existsSync(location)) {
      fail('runtime', `no store at ${echo(shown, 100)}`, {
        code: 'STORE_NOT_FOUND',
        flag: 'store',
        got: shown,
        hint: 'pass --store <postgres:// URL or an existing SQLite file>',
      });
    }
    const [{ loadSqliteDriver }, { applyMigrations, schemaVersion }] = await Promise.all([
      import('../../store/driver.js'),
      import('../../store/migrations.js'),
    ]);
    const Database = loadSqliteDriver();
    const db = new Database(location, { fileMustExist: true });
    try {
      const applied = applyMigrations(db);
      return { store: shown, backend: 'sqlite', applied, version: schemaVersion(db) };
    } finally {
      db.close();
    }
  },
});
