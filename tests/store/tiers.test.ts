import t from 'tap';
import type { BrokerError } from '../../src/errors.js';
import type { Tier } from '../../src/store/index.js';
import { type Backend, BACKENDS, freshStore } from './fixtures/backends.js';
import { codeOf } from './fixtures/index.js';

const KEY = { extensionId: 'github', assignmentId: 'block-7' };

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

    t.test('assignments are independent of each other', async (t) => {
      const { store } = await freshStore(t, backend);
      await store.setAssignmentTier({ ...KEY, tier: 'write', who: 'p' });
      t.equal(await store.getAssignmentTier({ ...KEY, assignmentId: 'block-8' }), 'read');
      t.equal(await store.getAssignmentTier({ ...KEY, extensionId: 'azure' }), 'read');
    });

    t.test('if the tier event cannot be written, the tier stays as it was and the call fails', async (t) => {
      const { store, location } = await freshStore(t, backend);
      await store.setAssignmentTier({ ...KEY, tier: 'write', who: 'alice' });

      // A second connection makes every tier-event insert fail; the store's own code is untouched.
      for (const q of SABOTAGE[backend.name].add) await backend.exec(location, q);
      const row = () =>
        backend.exec(
          location,
          'SELECT allow, updated_by FROM tier_assignments WHERE extension_id = $1 AND assignment_id = $2',
          [KEY.extensionId, KEY.assignmentId],
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
      const fresh = { extensionId: 'azure', assignmentId: 'block-1' };
      t.equal(
        await codeOf(store.setAssignmentTier({ ...fresh, tier: 'write', who: 'mallory' })),
        'STORE_WRITE_FAILED',
      );
      t.same(
        await backend.exec(location, 'SELECT extension_id FROM tier_assignments WHERE extension_id = $1', [
          'azure',
        ]),
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
