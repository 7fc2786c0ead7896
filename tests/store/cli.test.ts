/**
 * The bundled commands on a PostgreSQL store: `store migrate` (an operator's command), and
 * `--store postgres://…` / $CLIBROKER_STORE for the commands that read and write the store.
 * Passwords in the URL never appear in an answer.
 */
import { join } from 'node:path';
import t from 'tap';
import { BUNDLED_TOOLS, agentTools } from '../../src/commands/index.js';
import { storeMigrate } from '../../src/commands/store.js';
import { openSqliteStore } from '../../src/store/index.js';
import { PG_MIGRATIONS } from '../../src/store/pg-migrations.js';
import { runCli, testCli } from '../cli/fixtures/helpers.js';
import { freshDatabase, pgSkip } from '../helpers/postgres.js';
import { egress, tempDir } from './fixtures/index.js';

const cli = testCli(BUNDLED_TOOLS);
const json = (
  s: string,
): { success: boolean; data?: Record<string, unknown>; error?: Record<string, unknown> } => JSON.parse(s);

t.test('store migrate is an operator command, never offered to agents', async (t) => {
  t.notOk(agentTools().includes(storeMigrate));
  t.ok(BUNDLED_TOOLS.includes(storeMigrate));
});

t.test(
  'store migrate on PostgreSQL: applies once, answers with the URL redacted; the other commands use the same URL',
  { skip: pgSkip() },
  async (t) => {
    const url = await freshDatabase(t);
    const password = decodeURIComponent(new URL(url).password);

    const early = await runCli(cli, ['audit', 'query', '--store', url]);
    t.equal(early.code, 1, 'a broker command on a never-migrated database fails');
    t.match(early.stdout, /STORE_SCHEMA_OUTDATED/);
    t.match(early.stdout, /clibroker store migrate/);

    const first = await runCli(cli, ['store', 'migrate', '--store', url]);
    t.equal(first.code, 0, first.stderr);
    t.same(json(first.stdout).data, {
      store: url.replace(`:${new URL(url).password}@`, ':***@'),
      backend: 'postgres',
      applied: PG_MIGRATIONS.map((m) => m.version),
      version: PG_MIGRATIONS.length,
    });
    const again = await runCli(cli, ['store', 'migrate', '--store', url]);
    t.match(json(again.stdout).data, { applied: [], version: PG_MIGRATIONS.length }, 'idempotent');

    const set = await runCli(cli, [
      'tiers',
      'set',
      '--extension',
      'github',
      '--cli',
      'gh',
      '--tier',
      'write',
      '--by',
      'admin@example.com',
      '--store',
      url,
    ]);
    t.match(json(set.stdout).data, { status: 'changed', previous: 'read', tier: 'write' }, set.stdout);
    process.env['CLIBROKER_STORE'] = url;
    const q = await runCli(cli, ['audit', 'query', '--type', 'extension.cli_tier.raised']).finally(
      () => delete process.env['CLIBROKER_STORE'],
    );
    t.match(
      json(q.stdout).data,
      { events: [{ event: { type: 'extension.cli_tier.raised', cliId: 'gh', who: 'admin@example.com' } }] },
      'found through $CLIBROKER_STORE',
    );

    const wrong = await runCli(cli, [
      'audit',
      'query',
      '--store',
      url.replace(`:${new URL(url).password}@`, ':not-the-password@'),
    ]);
    t.equal(wrong.code, 1);
    t.match(wrong.stdout, /STORE_UNAVAILABLE/);
    for (const r of [early, first, again, set, q, wrong]) {
      t.notOk(
        `${r.stdout}${r.stderr}`.includes(password) || `${r.stdout}${r.stderr}`.includes('not-the-password'),
        'no password in any answer',
      );
    }
  },
);

t.test(
  'store migrate on SQLite: an existing file is brought up to date; a missing one is refused',
  async (t) => {
    const dir = tempDir(t);
    const path = join(dir, 'store.db');
    await openSqliteStore(path).close();
    const ok = await runCli(cli, ['store', 'migrate', '--store', path]);
    t.match(json(ok.stdout).data, { backend: 'sqlite', applied: [], version: PG_MIGRATIONS.length });
    const missing = await runCli(cli, ['store', 'migrate', '--store', join(dir, 'nope.db')]);
    t.equal(missing.code, 1);
    t.match(json(missing.stdout).error, { type: 'runtime', flag: 'store' });
  },
);

t.test('audit query pages with --after the last seq of a page', async (t) => {
  const path = join(tempDir(t), 'store.db');
  const store = openSqliteStore(path);
  for (let i = 0; i < 5; i++)
    await store.appendEvent(
      egress({ time: new Date(Date.UTC(2030, 0, 1, 0, 0, i)).toISOString(), path: `/p/${i}` }),
    );
  await store.close();
  const page = async (after?: number) => {
    const r = await runCli(cli, [
      'audit',
      'query',
      '--store',
      path,
      '--limit',
      '2',
      ...(after ? ['--after', String(after)] : []),
    ]);
    return (json(r.stdout).data as { events: { seq: number; event: { path: string } }[] }).events;
  };
  const first = await page();
  const second = await page(first.at(-1)!.seq);
  const third = await page(second.at(-1)!.seq);
  t.same(
    [first, second, third].map((p) => p.map((e) => e.event.path)),
    [['/p/0', '/p/1'], ['/p/2', '/p/3'], ['/p/4']],
  );
});
