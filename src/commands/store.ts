/**
 * `clibroker store migrate`: bring a store's schema up to this build's. A PostgreSQL
 * database shared by several brokers is migrated only by this command (a broker that finds
 * it behind refuses to start with STORE_SCHEMA_OUTDATED); a SQLite file is also migrated
 * whenever it is opened. An operator's job: `agent manifest` leaves it out.
 */
import { defineTool } from '../cli/define.js';
import { configParam, storeParam } from './common.js';

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
    config: {
      ...configParam,
      describe:
        "an operator configuration: migrate its store (PostgreSQL: the URL read from the configuration's secret reference; SQLite: the file, which also migrates itself whenever it is opened)",
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
    {
      params: { config: '/etc/clibroker/config.json' },
      comment:
        'migrate the store the configuration names ({"store": {"postgres": {"env": …}}}), before rolling out the brokers',
    },
  ],
  outputShape:
    "{store: string (password redacted), backend: 'postgres'|'sqlite', applied: number[], version: number}",
  async run(p) {
    const [{ storePath, storeFlag, configuredPostgresOptions }, { isPostgresUrl, redactStoreUrl }] =
      await Promise.all([import('./store-flag.js'), import('../store/url.js')]);
    const location = storePath(storeFlag(p));
    const shown = redactStoreUrl(location);
    if (isPostgresUrl(location)) {
      const { openPostgresStore } = await (await import('../store/load-postgres.js')).loadPostgresStore();
      const { reconnectWindowMs } = configuredPostgresOptions(location);
      const store = await openPostgresStore(location, {
        migrate: true,
        poolSize: 1,
        ...(reconnectWindowMs !== undefined ? { reconnectWindowMs } : {}),
      });
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
    const [{ existsSync }, { fail, echo }] = await Promise.all([
      import('node:fs'),
      import('../cli/envelope.js'),
    ]);
    if (location === ':memory:' || !existsSync(location)) {
      fail('runtime', `no store at ${echo(shown, 100)}`, {
        code: 'STORE_NOT_FOUND',
        flag: 'store',
        got: shown,
        hint: 'pass --store <postgres:// URL or an existing SQLite file>, or --config <file>',
      });
    }
    const [{ loadSqliteDriver }, { applyMigrations, schemaVersion }] = await Promise.all([
      import('../store/driver.js'),
      import('../store/migrations.js'),
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

/**
 * `clibroker store prune`: retention on demand, on either backend. A dry run by default (it
 * says how many events would go); `--apply --by <who>` deletes them and the store writes
 * `store.events.pruned` with the delete. What stays whatever its age (a run with an open
 * approval, every approval) is the store's rule (docs/store.md), not this command's.
 */
export const storePrune = defineTool({
  namespace: 'store',
  name: 'prune',
  description:
    'Delete audit events older than N days (a dry run unless --apply). Events of a run with a pending or approved-not-consumed approval stay, approvals are never deleted; an applied prune is audited as store.events.pruned with --by.',
  parameters: {
    olderThanDays: {
      type: 'number',
      integer: true,
      min: 1,
      max: 36_500,
      describe: 'prune events older than this many days (whole days, 1 or more)',
    },
    apply: {
      type: 'boolean',
      default: false,
      describe: 'delete them; without it nothing changes and the answer says how many would go',
    },
    by: {
      type: 'string',
      optional: true,
      describe: 'who prunes (recorded in the store.events.pruned event); required with --apply',
    },
    store: storeParam,
    config: configParam,
  },
  examples: [
    {
      params: { config: '/etc/clibroker/config.json', olderThanDays: 90 },
      comment: 'a dry run: how many events are older than 90 days and would go',
      output: {
        dryRun: true,
        store: '/var/lib/clibroker/store.db',
        before: '2025-01-01T12:00:00.000Z',
        events: 1200,
      },
    },
    {
      params: {
        config: '/etc/clibroker/config.json',
        olderThanDays: 90,
        apply: true,
        by: 'admin@example.com',
      },
      comment: 'delete them, audited with who did it',
      output: {
        status: 'pruned',
        updatedAt: '2025-04-01T12:00:00.000Z',
        store: '/var/lib/clibroker/store.db',
        before: '2025-01-01T12:00:00.000Z',
        events: 1200,
      },
    },
  ],
  outputShape:
    "dry run: {dryRun: true, store, before: string, events: number}; --apply: {status: 'pruned', updatedAt: string, store, before, events, event}",
  async run(p) {
    const [{ withStore, storeFlag, storePath }, { redactStoreUrl }, { fail }] = await Promise.all([
      import('./store-flag.js'),
      import('../store/url.js'),
      import('../cli/envelope.js'),
    ]);
    if (p.apply && (p.by === undefined || p.by.trim() === ''))
      fail('flag-parse', '--apply needs --by <who>: an applied prune is audited with who made it', {
        flag: 'by',
        expected: '--apply --by admin@example.com',
      });
    const flag = storeFlag(p);
    const store = redactStoreUrl(storePath(flag));
    const before = new Date(Date.now() - p.olderThanDays * 86_400_000);
    // never creates a store: a mistyped --store is refused rather than pruned empty
    return withStore(flag, false, async (s) => {
      if (!p.apply) {
        const r = await s.pruneEvents({ before, dryRun: true });
        return { dryRun: true, store, before: r.before, events: r.events };
      }
      const { mutationResult } = await import('./mutation.js');
      const r = await s.pruneEvents({ before, dryRun: false, who: p.by! });
      return mutationResult('pruned', r.event?.time, {
        store,
        before: r.before,
        events: r.events,
        event: r.event,
      });
    });
  },
});
