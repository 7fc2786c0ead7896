/**
 * The configuration's storeRetention reaches the store the host opens (the daemon and
 * `serve` start through createHost): old events of finished runs are pruned at start, as
 * `retention`; without it every event is kept.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { createHost } from '../../src/host/index.js';
import { openSqliteStore } from '../../src/store/index.js';
import { egress, tempDir } from './fixtures/index.js';

const cases: Record<string, [retention: { days: number } | undefined, kept: number, pruned: string[]]> = {
  'storeRetention: {days: 30} prunes the old event at start': [{ days: 30 }, 1, ['retention']],
  'no storeRetention keeps every event': [undefined, 2, []],
};

t.plan(Object.keys(cases).length);
for (const [name, [retention, kept, pruned]] of Object.entries(cases)) {
  t.test(name, async (t) => {
    const dir = tempDir(t);
    const path = join(dir, 'store.db');
    const seeded = openSqliteStore(path);
    await seeded.appendEvent(egress({ time: '2020-01-01T00:00:00.000Z' }));
    await seeded.appendEvent(egress({ time: new Date().toISOString() }));
    await seeded.close();
    const file = join(dir, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        organization: { ceiling: 'read' },
        images: {},
        extensions: {},
        store: 'store.db',
        ...(retention ? { storeRetention: retention } : {}),
      }),
    );
    const host = await createHost(await loadConfig(file, { env: {} }));
    await host.close();
    const store = openSqliteStore(path);
    t.teardown(() => store.close());
    t.equal((await store.listEvents({ type: 'egress.allowed' })).length, kept);
    t.same(
      (await store.listEvents({ type: 'store.events.pruned' })).map((e) =>
        'who' in e.event ? e.event.who : '',
      ),
      pruned,
    );
  });
}
