import Database from 'better-sqlite3';
import t from 'tap';
import type { BrokerError } from '../../src/errors.js';
import { applyMigrations, MIGRATIONS, type Tier } from '../../src/store/index.js';
import { PG_MIGRATIONS } from '../../src/store/pg-migrations.js';
import { type Backend, BACKENDS, freshStore } from './fixtures/backends.js';
import { codeOf } from './fixtures/index.js';

/** One tool's switch: github's gh in assignment block-7. */
const KEY = { extensionId: 'github', assignmentId: 'block-7', cliId: 'gh' };

/** The schema version before switches were kept per tool. */
const PER_ASSIGNMENT_VERSION = 3;

/** Bring `location` to the schema the previous release left: versions 1..3, switches per assignment. */
const PREVIOUS_SCHEMA: Record<Backend['name'], (location: string) => Promise<void>> = {
  async sqlite(location) {
    const db = new Database(location);
    try {
      applyMigrations(db, MIGRATIONS.slice(0, PER_ASSIGNMENT_VERSION));
    } finally {
      db.close();
    }
  },
  async postgres(location) {
    const { openPostgresStore } = await import('../../src/store/postgres.js');
    const store = await openPostgresStore(location, {
      migrate: true,
      migrations: PG_MIGRATIONS.slice(0, PER_ASSIGNMENT_VERSION),
    });
    await store.close();
  },
};

// Each case: a sequence of requested tiers; what each step must record.
const cases: Record<string, { steps: Tier[]; events: (string | null)[]; final: Tier }> = {
  'an unset switch reads as read, and setting read changes nothing': {
    steps: ['read'],
    events: [null],
    final: 'read',
  },
  'read → write is raised': { steps: ['write'], events: ['extension.cli_tier.raised'], final: 'write' },
  'write → read is lowered': {
    steps: ['write', 'read'],
    events: ['extension.cli_tier.raised', 'extension.cli_tier.lowered'],
    final: 'read',
  },
  'setting the same tier twice writes one event': {
    steps: ['write', 'write'],
    events: ['extension.cli_tier.raised', null],
    final: 'write',
  },
};

/** A trigger that fails every tier-event insert, as a full disk or a broken schema would; and its removal. */
const SABOTAGE: Record<Backend['name'], { add: string[]; drop: string[] }> = {
  sqlite: {
    add: [
      `CREATE TRIGGER fail_tier_events BEFORE INSERT ON audit_events WHEN NEW.type LIKE 'extension.cli_tier.%'
           BEGIN SELECT RAISE(ABORT, 'injected audit failure'); END`,
    ],
    drop: ['DROP TRIGGER fail_tier_events'],
  },
  postgres: {
    add: [
      `CREATE FUNCTION fail_tier_events() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected audit failure'; END $$`,
      `CREATE TRIGGER fail_tier_events BEFORE INSERT ON audit_events FOR EACH ROW WHEN (NEW.type LIKE 'extension.cli_tier.%') EXECUTE FUNCTION fail_tier_events()`,
    ],
    drop: ['DROP TRIGGER fail_tier_events ON audit_events'],
  },
};

// Every case runs against each backend (a SQLite file, a PostgreSQL database).
for (const backend of BACKENDS) {
  t.test(backend.name, { skip: backend.skip }, async (t) => {
    t.test('tier changes and their events', async (t) => {
      t.plan(Object.keys(cases).length);
      for (const [name, c] of Object.entries(cases)) {
        await t.test(name, async (t) => {
          const { store } = await freshStore(t, backend);
          t.equal(await store.getAssignmentTier(KEY), 'read', 'unset is read');
          let previous: Tier = 'read';
          for (const [i, tier] of c.steps.entries()) {
            const r = await store.setAssignmentTier({ ...KEY, tier, who: `person-${i}` });
            t.equal(r.changed, c.events[i] !== null, `step ${i} changed`);
            t.equal(r.previous, previous);
            if (c.events[i])
              t.match(r.event, { type: c.events[i], who: `person-${i}`, previous, new: tier, ...KEY });
            previous = tier;
          }
          t.equal(await store.getAssignmentTier(KEY), c.final);
          const stored = await store.listEvents({ extensionId: KEY.extensionId });
          t.same(
            stored.map((s) => s.event.type),
            c.events.filter((e) => e !== null),
            'exactly the changes are in the audit trail',
          );
        });
      }
    });

    t.test('switches are per tool: assignments, extensions and CLIs are independent', async (t) => {
      const { store } = await freshStore(t, backend);
      const r = await store.setAssignmentTier({ ...KEY, tier: 'write', who: 'p' });
      t.equal(r.event?.cliId, 'gh', 'the event names the CLI');
      t.equal(await store.getAssignmentTier(KEY), 'write');
      t.equal(
        await store.getAssignmentTier({ ...KEY, cliId: 'curl' }),
        'read',
        'curl of the same assignment',
      );
      t.equal(await store.getAssignmentTier({ ...KEY, assignmentId: 'block-8' }), 'read');
      t.equal(await store.getAssignmentTier({ ...KEY, extensionId: 'azure' }), 'read');
      // raising curl too, then lowering gh, leaves curl raised
      await store.setAssignmentTier({ ...KEY, cliId: 'curl', tier: 'write', who: 'p' });
      await store.setAssignmentTier({ ...KEY, tier: 'read', who: 'p' });
      t.equal(await store.getAssignmentTier(KEY), 'read');
      t.equal(await store.getAssignmentTier({ ...KEY, cliId: 'curl' }), 'write');
      t.same(
        (await store.listEvents()).map((s) => {
          const e = s.event as { type: string; cliId?: string };
          return `${e.type} ${e.cliId}`;
        }),
        ['extension.cli_tier.raised gh', 'extension.cli_tier.raised curl', 'extension.cli_tier.lowered gh'],
        'every event names its CLI',
      );
    });

    t.test(
      'a store the previous release left is migrated; its per-assignment switches raise no tool',
      async (t) => {
        const location = await backend.location(t);
        await PREVIOUS_SCHEMA[backend.name](location);
        // what the previous release's setAssignmentTier wrote: the switch and its event
        await backend.exec(
          location,
          "INSERT INTO tier_assignments (extension_id, assignment_id, allow, updated_at, updated_by) VALUES ('github', 'block-7', 'write', '2030-01-01T00:00:00.000Z', 'alice')",
        );
        const old = {
          type: 'extension.cli_tier.raised',
          time: '2030-01-01T00:00:00.000Z',
          extensionId: 'github',
          assignmentId: 'block-7',
          who: 'alice',
          previous: 'read',
          new: 'write',
        };
        await backend.exec(
          location,
          'INSERT INTO audit_events (type, time, time_ms, extension_id, data) VALUES ($1, $2, $3, $4, $5)',
          [old.type, old.time, Date.parse(old.time), old.extensionId, JSON.stringify(old)],
        );

        const store = await backend.open(t, location);
        const version = await backend.exec(location, 'SELECT max(version) AS v FROM schema_migrations');
        t.equal(Number(version[0]?.['v']), MIGRATIONS.length, 'migrated to the per-tool schema and past it');
        for (const cliId of ['gh', 'curl'])
          t.equal(await store.getAssignmentTier({ ...KEY, cliId }), 'read', `${cliId}: fail closed, read`);
        t.same(
          (await store.listEvents()).map((s) => s.event),
          [old],
          'the old switch stays in the audit trail',
        );
        // the operator raises each tool again
        t.match(await store.setAssignmentTier({ ...KEY, tier: 'write', who: 'alice' }), {
          changed: true,
          previous: 'read',
          event: { cliId: 'gh' },
        });
        t.equal(await store.getAssignmentTier(KEY), 'write');
        t.equal(await store.getAssignmentTier({ ...KEY, cliId: 'curl' }), 'read');
      },
    );

    t.test('if the tier event cannot be written, the tier stays as it was and the call fails', async (t) => {
      const { store, location } = await freshStore(t, backend);
      await store.setAssignmentTier({ ...KEY, tier: 'write', who: 'alice' });

      // A second connection makes every tier-event insert fail; the store's own code is untouched.
      for (const q of SABOTAGE[backend.name].add) await backend.exec(location, q);
      const row = () =>
        backend.exec(
          location,
          'SELECT allow, updated_by FROM cli_tiers WHERE extension_id = $1 AND assignment_id = $2 AND cli_id = $3',
          [KEY.extensionId, KEY.assignmentId, KEY.cliId],
        );
      const before = await row();
      t.equal(before.length, 1);

      const err = await store
        .setAssignmentTier({ ...KEY, tier: 'read', who: 'mallory' })
        .catch((e: BrokerError) => e);
      t.equal((err as BrokerError).code, 'STORE_WRITE_FAILED');
      t.match((err as Error).message, /injected audit failure/);
      t.equal(await store.getAssignmentTier(KEY), 'write', 'still write');
      t.same(await row(), before, 'the row, including who changed it last, is unchanged');
      t.same(
        (await store.listEvents()).map((s) => s.event.type),
        ['extension.cli_tier.raised'],
        'no lowered event',
      );

      // A brand-new assignment must not appear either.
      const fresh = { extensionId: 'azure', assignmentId: 'block-1', cliId: 'az' };
      t.equal(
        await codeOf(store.setAssignmentTier({ ...fresh, tier: 'write', who: 'mallory' })),
        'STORE_WRITE_FAILED',
      );
      t.same(
        await backend.exec(location, 'SELECT extension_id FROM cli_tiers WHERE extension_id = $1', ['azure']),
        [],
        'no row for it',
      );
      t.equal(await store.getAssignmentTier(fresh), 'read');

      // Once the event can be written again, the same call succeeds.
      for (const q of SABOTAGE[backend.name].drop) await backend.exec(location, q);
      t.match(await store.setAssignmentTier({ ...KEY, tier: 'read', who: 'alice' }), {
        changed: true,
        previous: 'write',
        tier: 'read',
      });
    });

    t.test('bad input is refused with STORE_INPUT_INVALID', async (t) => {
      const { store } = await freshStore(t, backend);
      const bad: Record<string, Parameters<typeof store.setAssignmentTier>[0]> = {
        'unknown tier': { ...KEY, tier: 'admin' as Tier, who: 'p' },
        'empty who': { ...KEY, tier: 'write', who: '' },
        'empty extension id': { ...KEY, extensionId: '', tier: 'write', who: 'p' },
        'empty cli id': { ...KEY, cliId: '', tier: 'write', who: 'p' },
        'no cli id': {
          extensionId: KEY.extensionId,
          assignmentId: KEY.assignmentId,
          tier: 'write',
          who: 'p',
        } as never,
      };
      for (const [name, input] of Object.entries(bad))
        t.equal(await codeOf(store.setAssignmentTier(input)), 'STORE_INPUT_INVALID', name);
      t.equal(await store.getAssignmentTier(KEY), 'read');
    });

    t.test(
      'racing tier changes over several connections: one raised event, the switch ends up write',
      async (t) => {
        const { store, location } = await freshStore(t, backend);
        const others = await Promise.all([1, 2, 3].map(() => backend.open(t, location)));
        const all = [store, ...others];
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            all[i % all.length]!.setAssignmentTier({ ...KEY, tier: 'write', who: `p${i}` }),
          ),
        );
        t.equal(results.filter((r) => r.changed).length, 1, 'exactly one call changed it');
        t.same((await store.listEvents({ type: 'extension.cli_tier.raised' })).length, 1, 'one event');
      },
    );
  });
}
