/**
 * The audit trail's hash chain on both backends, checked through `clibroker audit verify`:
 * a clean trail verifies with its count and head; an edited, deleted, reordered or cut-off
 * event breaks it at the right seq with the right kind; a prune (with events it must keep
 * between the ones it deletes) still verifies, and a deletion beside a pruned hole does not;
 * events stored before the chain existed are counted, not checked; two store objects
 * appending at once to one PostgreSQL database make one chain.
 */
import Database from 'better-sqlite3';
import t from 'tap';
import { BUNDLED_TOOLS } from '../../src/commands/index.js';
import { openPostgresStore } from '../../src/store/postgres.js';
import { MIGRATIONS, applyMigrations } from '../../src/store/migrations.js';
import { PG_MIGRATIONS } from '../../src/store/pg-migrations.js';
import type { Store } from '../../src/store/types.js';
import { runCli, testCli } from '../cli/fixtures/helpers.js';
import { type Backend, BACKENDS, freshStore, postgresBackend, sqliteBackend } from './fixtures/backends.js';
import { egress, pending } from './fixtures/index.js';

const cli = testCli(BUNDLED_TOOLS);

async function verify(location: string) {
  const r = await runCli(cli, ['audit', 'verify', '--store', location]);
  return {
    code: r.code,
    env: r.env as
      | { success: boolean; data?: Record<string, unknown>; error?: Record<string, unknown> }
      | undefined,
    out: r.stdout,
  };
}

/** Lift the append-only triggers, as someone with write access to the database could. */
async function unguard(backend: Backend, location: string): Promise<void> {
  if (backend.name === 'sqlite') {
    await backend.exec(location, 'DROP TRIGGER audit_events_no_update');
    await backend.exec(location, 'DROP TRIGGER audit_events_no_delete');
  } else {
    await backend.exec(location, 'ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only');
  }
}

const COLUMNS = [
  'type',
  'time',
  'time_ms',
  'run_id',
  'extension_id',
  'decision',
  'data',
  'prev_hash',
  'hash',
];

async function swap(backend: Backend, location: string, a: number, b: number): Promise<void> {
  const rows = await backend.exec(
    location,
    `SELECT seq, ${COLUMNS.join(', ')} FROM audit_events WHERE seq IN ($1, $2)`,
    [a, b],
  );
  const bySeq = new Map(rows.map((r) => [Number(r['seq']), r]));
  const set = COLUMNS.map((c, i) => `${c} = $${i + 1}`).join(', ');
  for (const [to, from] of [
    [a, b],
    [b, a],
  ] as const) {
    const src = bySeq.get(from)!;
    await backend.exec(location, `UPDATE audit_events SET ${set} WHERE seq = $${COLUMNS.length + 1}`, [
      ...COLUMNS.map((c) => src[c]),
      to,
    ]);
  }
}

/** Five events, seq 1..5, on a fresh store of `backend`. */
async function five(
  t: { teardown(fn: () => unknown): void },
  backend: Backend,
): Promise<{ store: Store; location: string }> {
  const fresh = await freshStore(t, backend);
  for (let i = 1; i <= 5; i++) await fresh.store.appendEvent(egress({ path: `/repos/acme/app/issues/${i}` }));
  return fresh;
}

type Tamper = {
  tamper: (backend: Backend, location: string) => Promise<unknown>;
  kind: string;
  seq: number;
};
const TAMPERING: Record<string, Tamper> = {
  'an edited event breaks at its own seq': {
    tamper: (b, l) =>
      b.exec(l, "UPDATE audit_events SET data = replace(data, '/issues/3', '/issues/9') WHERE seq = 3"),
    kind: 'edited',
    seq: 3,
  },
  'a deleted event breaks at the seq after it': {
    tamper: (b, l) => b.exec(l, 'DELETE FROM audit_events WHERE seq = 3'),
    kind: 'deleted',
    seq: 4,
  },
  'two events swapped break at the first of them': {
    tamper: (b, l) => swap(b, l, 3, 4),
    kind: 'reordered',
    seq: 3,
  },
  'the newest event deleted is a cut-off trail, named by the head': {
    tamper: (b, l) => b.exec(l, 'DELETE FROM audit_events WHERE seq = 5'),
    kind: 'truncated',
    seq: 5,
  },
  'the oldest event deleted breaks at the new first': {
    tamper: (b, l) => b.exec(l, 'DELETE FROM audit_events WHERE seq = 1'),
    kind: 'deleted',
    seq: 2,
  },
};

for (const backend of BACKENDS) {
  t.test(backend.name, { skip: backend.skip }, async (t) => {
    t.test('a clean trail verifies: the count and the head hash', async (t) => {
      const { store, location } = await five(t, backend);
      // text the two encoders must escape alike: quotes, backslashes, controls, non-ASCII
      await store.appendEvent(egress({ path: '/a"b\\c\u0001\u001f\n\té\u2028😀' }));
      const v = await verify(location);
      t.equal(v.code, 0, v.out);
      t.match(v.env?.data, { ok: true, events: 6, unchained: 0, first: 1, last: 6, head: /^[0-9a-f]{64}$/ });
      const [last] = await backend.exec(location, 'SELECT hash FROM audit_events WHERE seq = 6');
      t.equal(v.env?.data?.['head'], last!['hash'], 'the head is the last event hash');
    });

    for (const [name, c] of Object.entries(TAMPERING)) {
      t.test(name, async (t) => {
        const { location } = await five(t, backend);
        t.equal((await verify(location)).code, 0, 'clean before');
        await unguard(backend, location);
        await c.tamper(backend, location);
        const v = await verify(location);
        t.equal(v.code, 1, 'a break exits non-zero');
        t.match(v.env?.error, { code: 'AUDIT_CHAIN_BROKEN', details: { seq: c.seq, kind: c.kind } }, v.out);
      });
    }

    t.test('a prune that keeps events between the ones it deletes still verifies', async (t) => {
      const { store, location } = await freshStore(t, backend);
      const OLD = '2020-01-01T00:00:00.000Z';
      const kept = { runId: 'run-open', extensionId: 'github' };
      await store.createApproval(pending({ runId: 'run-open' }));
      await store.appendEvent(egress({ time: OLD })); // 1: pruned
      await store.appendEvent(egress({ time: OLD, labels: kept })); // 2: kept (open approval)
      await store.appendEvent(egress({ time: OLD })); // 3: pruned
      await store.appendEvent(egress({ time: OLD, labels: kept })); // 4: kept
      await store.appendEvent(egress({ time: OLD })); // 5: pruned
      const r = await store.pruneEvents({ before: '2025-01-01T00:00:00Z', dryRun: false, who: 'ops' });
      t.equal(r.events, 3);
      t.match(r.event?.chain, {
        start: 2,
        gaps: [
          [2, 4],
          [4, 6],
        ],
        lastPrunedSeq: 5,
      });
      await store.appendEvent(egress()); // 7
      const v = await verify(location);
      t.equal(v.code, 0, v.out);
      t.match(v.env?.data, { ok: true, events: 4, first: 2, last: 7 });

      await unguard(backend, location);
      await backend.exec(location, 'DELETE FROM audit_events WHERE seq = 4');
      const broken = await verify(location);
      t.match(
        broken.env?.error,
        { code: 'AUDIT_CHAIN_BROKEN', details: { seq: 6, kind: 'deleted', after: 2 } },
        'a kept event deleted beside a pruned hole is caught',
      );
    });

    t.test('a prune of the newest events: its own event spans the hole', async (t) => {
      const { store, location } = await freshStore(t, backend);
      for (let i = 0; i < 3; i++) await store.appendEvent(egress({ time: '2020-01-01T00:00:00.000Z' }));
      const r = await store.pruneEvents({ before: '2025-01-01T00:00:00Z', dryRun: false, who: 'ops' });
      t.match(r.event?.chain, { start: 4, lastPrunedSeq: 3 });
      t.match((await verify(location)).env?.data, { ok: true, events: 1, first: 4 });
    });
  });
}

t.test('events stored before the chain are counted, not checked: the chain starts after them', async (t) => {
  t.test('sqlite', async (t) => {
    const location = await sqliteBackend.location(t);
    const db = new Database(location);
    applyMigrations(db, MIGRATIONS.slice(0, 6));
    db.prepare(
      "INSERT INTO audit_events (type, time, time_ms, decision, data) VALUES ('egress.allowed', '2030-01-01T00:00:00.000Z', 1, 'allow', '{}')",
    ).run();
    db.close();
    const store = await sqliteBackend.open(t, location);
    await store.appendEvent(egress());
    t.match((await verify(location)).env?.data, { ok: true, events: 1, unchained: 1, first: 2 });
  });
  t.test('postgres', { skip: postgresBackend.skip }, async (t) => {
    const location = await postgresBackend.location(t);
    const old = await openPostgresStore(location, { migrate: true, migrations: PG_MIGRATIONS.slice(0, 6) });
    await old.appendEvent(egress());
    await old.appendEvent(egress());
    await old.close();
    const store = await postgresBackend.open(t, location);
    await store.appendEvent(egress());
    t.match((await verify(location)).env?.data, { ok: true, events: 1, unchained: 2, first: 3 });
  });
});

t.test(
  "postgres: a previous build's insert, which names no chain column, is chained too",
  { skip: postgresBackend.skip },
  async (t) => {
    const location = await postgresBackend.location(t);
    const store = await postgresBackend.open(t, location);
    await store.appendEvent(egress());
    // the statement of the build before the chain, as a replica not yet upgraded sends it
    await postgresBackend.exec(
      location,
      `INSERT INTO audit_events (type, time, time_ms, run_id, extension_id, decision, data)
       VALUES ('egress.allowed', '2030-01-01T00:00:00.000Z', 1893456000000, 'run-old', 'github', 'allow', $1)`,
      [JSON.stringify(egress({ labels: { runId: 'run-old', extensionId: 'github' } }))],
    );
    await store.appendEvent(egress());
    t.match((await verify(location)).env?.data, { ok: true, events: 3, unchained: 0 });
  },
);

t.test(
  'postgres: two store objects appending at once make one chain',
  { skip: postgresBackend.skip },
  async (t) => {
    const location = await postgresBackend.location(t);
    const a = await postgresBackend.open(t, location);
    const b = await postgresBackend.open(t, location);
    const appends: Promise<number>[] = [];
    for (let i = 0; i < 100; i++) {
      appends.push(a.appendEvent(egress({ path: `/a/${i}` })));
      appends.push(b.appendEvent(egress({ path: `/b/${i}` })));
    }
    await Promise.all([
      ...appends,
      a.setAssignmentTier({ extensionId: 'e', assignmentId: 'x', cliId: 'c', tier: 'write', who: 'op' }),
      b.setAssignmentTier({ extensionId: 'e', assignmentId: 'y', cliId: 'c', tier: 'write', who: 'op' }),
    ]);
    const seqs = (await Promise.all(appends)).sort((x, y) => x - y);
    t.same(seqs, [...new Set(seqs)], 'every seq once');
    const v = await verify(location);
    t.equal(v.code, 0, v.out);
    t.match(v.env?.data, { ok: true, events: 202, first: 1, last: 202 });
  },
);
