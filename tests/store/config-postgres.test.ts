/**
 * A configuration whose store is PostgreSQL (`"store": {"postgres": {"file": …}}`), against a
 * real server: `clibroker store migrate --config` migrates it; before that `createHost`,
 * `clibroker serve`, `clibroker daemon` and `config validate` refuse with
 * STORE_SCHEMA_OUTDATED; after it the host's store is that database (seen through a second
 * connection), storeRetention prunes there, and the operator commands with --config reach it.
 * The URL (its password) is never printed.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { isBrokerError } from '../../src/errors.js';
import { createHost } from '../../src/host/index.js';
import { openPostgresStore } from '../../src/store/postgres.js';
import type { EgressEvent } from '../../src/store/types.js';
import { buildBinary, spawnWith } from '../cli/fixtures/helpers.js';
import { freshDatabase, pgSkip } from '../helpers/postgres.js';
import { egress } from './fixtures/index.js';

const skip = pgSkip();

t.test('the configured PostgreSQL store: migrate, refuse behind, serve from it', { skip }, async (t) => {
  const { bin } = await buildBinary();
  t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));
  const url = await freshDatabase(t);
  const password = new URL(url).password;
  const dir = mkdtempSync(join(tmpdir(), 'clibroker-pgcfg-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'store.url'), `${url}\n`, { mode: 0o600 });
  mkdirSync(join(dir, 'run'), { mode: 0o700 }); // the daemon's socket directory, as systemd makes it
  const file = join(dir, 'config.json');
  writeFileSync(
    file,
    JSON.stringify({
      version: 1,
      organization: { ceiling: 'read' },
      images: {},
      extensions: {},
      store: { postgres: { file: 'store.url' }, poolSize: 2, reconnectWindowSeconds: 2 },
      storeRetention: { days: 30 },
      daemon: { socket: join(dir, 'run', 'broker.sock') },
    }),
    { mode: 0o600 },
  );
  const run = (...args: string[]) => {
    const r = spawnWith(bin, args);
    t.notOk(r.stdout.includes(password) || r.stderr.includes(password), `${args[0]}: no password printed`);
    return r;
  };

  // behind: every start refuses, and nothing is migrated on the way
  const refused = await loadConfig(file, { env: {} })
    .then((c) => createHost(c))
    .then(
      async (h) => {
        await h.close();
        return undefined;
      },
      (e: unknown) => e,
    );
  t.ok(
    isBrokerError(refused) && refused.code === 'STORE_SCHEMA_OUTDATED',
    'createHost on an unmigrated database',
  );
  for (const cmd of [
    ['serve', '--config', file, '--port', '0'],
    ['daemon', '--config', file],
  ]) {
    const r = run(...cmd);
    t.not(r.code, 0, `clibroker ${cmd[0]} exits non-zero`);
    t.match(r.stdout + r.stderr, /STORE_SCHEMA_OUTDATED/, `clibroker ${cmd[0]} prints the coded error`);
  }
  const v = run('config', 'validate', '--config', file);
  t.equal(v.code, 1);
  t.match(v.env, {
    error: {
      code: 'CONFIG_INVALID',
      details: {
        problems: [{ path: 'store', code: 'STORE_SCHEMA_OUTDATED', message: /store migrate --config/ }],
      },
    },
  });

  // migrate through the configuration
  const m = run('store', 'migrate', '--config', file);
  t.equal(m.code, 0, m.stdout + m.stderr);
  t.match(m.data, { backend: 'postgres' });
  t.equal(m.data.applied[0], 1, 'every migration applied, from the first');
  t.equal(m.data.version, m.data.applied.at(-1), 'up to this build');
  t.match(m.data.store, /^postgres:\/\/clibroker:\*\*\*@127\.0\.0\.1:\d+\//, 'the URL redacted');
  t.same(run('store', 'migrate', '--config', file).data.applied, [], 'a second run applies nothing');
  t.equal(run('config', 'validate', '--config', file).code, 0, 'validate passes once migrated');

  // an old event of a finished run and a recent one, written by another broker
  const other = await openPostgresStore(url);
  t.teardown(() => other.close());
  await other.appendEvent(egress({ time: '2020-01-01T00:00:00.000Z' }));
  await other.appendEvent(egress({ time: new Date().toISOString() }));

  const host = await createHost(await loadConfig(file, { env: {} }));
  t.teardown(() => host.close());
  // storeRetention reached PostgreSQL: the old event went at start, audited as retention
  const pruned = await other.listEvents({ type: 'store.events.pruned' });
  t.match(
    pruned.map((p) => p.event),
    [{ type: 'store.events.pruned', who: 'retention', events: 1 }],
  );
  t.same(
    (await other.listEvents({ type: 'egress.allowed' })).length,
    1,
    'the old event is gone, the recent one kept',
  );

  // the host's store is this database: what it writes, a second connection reads
  const mark = egress({ time: new Date().toISOString(), path: '/written/by/the/host' }) as EgressEvent;
  await host.store.appendEvent(mark);
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const rows = await c.query("SELECT data FROM audit_events WHERE data LIKE '%/written/by/the/host%'");
    t.equal(rows.rowCount, 1, 'the event the host wrote is in PostgreSQL');
  } finally {
    await c.end();
  }

  // the operator commands with --config reach the same database
  const prune = run('store', 'prune', '--config', file, '--older-than-days', '1');
  t.equal(prune.code, 0, prune.stdout + prune.stderr);
  t.match(prune.data, { dryRun: true, events: 0, store: /^postgres:\/\/clibroker:\*\*\*@/ });
  const approvals = run('approvals', 'list', '--config', file);
  t.equal(approvals.code, 0, approvals.stdout + approvals.stderr);
  const audit = run('audit', 'query', '--config', file, '--type', 'store.events.pruned');
  t.equal(audit.code, 0, audit.stdout + audit.stderr);
  t.match(audit.stdout, /retention/, 'audit query reads the prune the host made');
});
