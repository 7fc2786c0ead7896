/**
 * `clibroker tiers set` through the real bundled program, as an operator runs it against the
 * store a configuration names: the switch it sets is one tool's, and its event says which.
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { openSqliteStore } from '../../src/store/index.js';
import { buildBinary, spawnWith } from '../cli/fixtures/helpers.js';
import { makeFixture } from '../config/fixtures.js';

const { bin } = await buildBinary();
t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));

t.test('tiers set --cli raises that tool only, audited with its cli id', async (t) => {
  const f = makeFixture(t);
  const file = f.write();
  const set = (cli: string, tier: string) =>
    spawnWith(bin, [
      'tiers',
      'set',
      '--extension',
      'github',
      '--cli',
      cli,
      '--tier',
      tier,
      '--by',
      'admin@example.com',
      '--config',
      file,
    ]);

  const raised = set('gh', 'write');
  t.equal(raised.code, 0, raised.stderr);
  t.match(raised.data, {
    status: 'changed',
    extension: 'github',
    assignment: 'default',
    cli: 'gh',
    previous: 'read',
    tier: 'write',
    event: { type: 'extension.cli_tier.raised', cliId: 'gh', who: 'admin@example.com' },
  });
  const again = set('gh', 'write');
  t.match(again.data, { status: 'unchanged', cli: 'gh', previous: 'write', tier: 'write' });
  t.notOk('event' in again.data, 'nothing changed, no event');
  const other = set('curl', 'read');
  t.match(other.data, { status: 'unchanged', cli: 'curl', previous: 'read' }, 'curl was never raised');

  const store = openSqliteStore(join(f.dir, 'store.db'));
  t.teardown(() => store.close());
  const key = { extensionId: 'github', assignmentId: 'default' };
  t.equal(await store.getAssignmentTier({ ...key, cliId: 'gh' }), 'write');
  t.equal(await store.getAssignmentTier({ ...key, cliId: 'curl' }), 'read');

  const audit = spawnWith(bin, ['audit', 'query', '--type', 'extension.cli_tier.raised', '--config', file]);
  t.equal(audit.code, 0, audit.stderr);
  t.match(audit.data, {
    events: [{ event: { cliId: 'gh', extensionId: 'github', assignmentId: 'default' } }],
  });
  t.equal(audit.data.events.length, 1);
});

t.test('tiers set without --cli is refused: there is no switch for a whole assignment', async (t) => {
  const f = makeFixture(t);
  const file = f.write();
  const r = spawnWith(bin, [
    'tiers',
    'set',
    '--extension',
    'github',
    '--tier',
    'write',
    '--by',
    'admin@example.com',
    '--config',
    file,
  ]);
  t.not(r.code, 0);
  t.match(r.env, { success: false, error: { flag: 'cli' } });
});
