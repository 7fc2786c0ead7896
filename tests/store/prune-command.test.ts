/**
 * `clibroker store prune`, spawned from the built program on SQLite (through --config) and
 * PostgreSQL (through --store): a dry run by default, `--apply --by` deletes and is audited,
 * a run with a pending approval keeps its events.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { agentTools, BUNDLED_TOOLS } from '../../src/commands/index.js';
import { storePrune } from '../../src/commands/store.js';
import { openSqliteStore, openStore, type Store } from '../../src/store/index.js';
import { buildBinary, spawnBin } from '../cli/fixtures/helpers.js';
import { freshDatabase, pgSkip } from '../helpers/postgres.js';
import { egress, execution, pending, tempDir } from './fixtures/index.js';

const OLD = '2020-01-01T00:00:00.000Z';

/** Old events of a run waiting on a reviewer and of a finished run, and one recent event. */
async function seed(store: Store): Promise<void> {
  await store.createApproval(pending({ runId: 'run-waiting' }));
  for (const runId of ['run-waiting', 'run-done']) {
    await store.appendEvent(egress({ time: OLD, labels: { runId, extensionId: 'github' } }));
    await store.appendEvent(execution({ time: OLD, runId }));
  }
  await store.appendEvent(egress({ time: new Date().toISOString() }));
}

const types = async (store: Store) => (await store.listEvents()).map((e) => e.event.type);

t.test('store prune is an operator command, never offered to agents', async (t) => {
  t.notOk(agentTools().includes(storePrune));
  t.ok(BUNDLED_TOOLS.includes(storePrune));
});

t.test('the built program', async (t) => {
  const { bin } = await buildBinary();

  t.test('on SQLite through --config: dry run, refusal without --by, then applied', async (t) => {
    const dir = tempDir(t);
    const path = join(dir, 'store.db');
    const seeded = openSqliteStore(path);
    await seed(seeded);
    const all = await types(seeded);
    await seeded.close();
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ store: 'store.db' }));

    const dry = spawnBin(bin, ['store', 'prune', '--config', config, '--older-than-days', '30']);
    t.equal(dry.code, 0, dry.stderr);
    t.match(dry.env, { success: true, data: { dryRun: true, store: path, events: 2 } });
    const noBy = spawnBin(bin, ['store', 'prune', '--config', config, '--older-than-days', '30', '--apply']);
    t.equal(noBy.code, 1);
    t.match(noBy.env, { success: false, error: { type: 'flag-parse', flag: 'by' } });
    const after = openSqliteStore(path);
    t.same(await types(after), all, 'neither deleted anything');
    await after.close();

    const applied = spawnBin(bin, [
      'store',
      'prune',
      '--config',
      config,
      '--older-than-days',
      '30',
      '--apply',
      '--by',
      'ops@example.com',
    ]);
    t.equal(applied.code, 0, applied.stderr);
    t.match(applied.env, {
      success: true,
      data: {
        status: 'pruned',
        updatedAt: String,
        store: path,
        events: 2,
        event: { type: 'store.events.pruned', who: 'ops@example.com', events: 2 },
      },
    });
    const pruned = openSqliteStore(path);
    t.teardown(() => pruned.close());
    t.same(
      (await pruned.listEvents({ until: '2025-01-01T00:00:00Z' })).map((e) => e.event.type),
      ['egress.allowed', 'extension.execution.succeeded'],
      'the waiting run keeps its old events',
    );
    t.equal((await pruned.listEvents({ runId: 'run-waiting' })).length, 2);
    t.equal((await pruned.listEvents({ type: 'store.events.pruned' })).length, 1, 'audited once');

    const missing = spawnBin(bin, [
      'store',
      'prune',
      '--store',
      join(dir, 'nope.db'),
      '--older-than-days',
      '1',
    ]);
    t.equal(missing.code, 1);
    t.match(missing.env, { error: { type: 'runtime', flag: 'store' } }, 'a missing store is not created');
    const zero = spawnBin(bin, ['store', 'prune', '--store', path, '--older-than-days', '0']);
    t.equal(zero.code, 1, 'whole days, 1 or more');
  });

  t.test('on PostgreSQL through --store: the URL redacted, the same rule', { skip: pgSkip() }, async (t) => {
    const url = await freshDatabase(t);
    const password = decodeURIComponent(new URL(url).password);
    const store = await openStore(url, { migrate: true });
    t.teardown(() => store.close());
    await seed(store);
    const all = await types(store);

    const dry = spawnBin(bin, ['store', 'prune', '--store', url, '--older-than-days', '30']);
    t.equal(dry.code, 0, dry.stderr);
    t.match(dry.env, { data: { dryRun: true, store: /:\*\*\*@/, events: 2 } });
    t.same(await types(store), all, 'the dry run deleted nothing');

    const applied = spawnBin(bin, [
      'store',
      'prune',
      '--store',
      url,
      '--older-than-days',
      '30',
      '--apply',
      '--by',
      'ops@example.com',
    ]);
    t.equal(applied.code, 0, applied.stderr);
    t.match(applied.env, { data: { status: 'pruned', events: 2, event: { who: 'ops@example.com' } } });
    t.equal((await store.listEvents({ runId: 'run-waiting' })).length, 2, 'the waiting run keeps its events');
    t.equal((await store.listEvents({ runId: 'run-done' })).length, 0);
    t.match(
      (await store.listEvents({ type: 'store.events.pruned' })).map((e) => e.event),
      [{ who: 'ops@example.com', events: 2 }],
    );
    for (const r of [dry, applied])
      t.notOk(`${r.stdout}${r.stderr}`.includes(password), 'no password in any answer');
  });
});
