/**
 * Several brokers, one PostgreSQL database: real brokers and runners, real curl against the
 * embedded mock vendor, each broker with a store (a pool) of its own on the same database.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import type { AuditEvent } from '../../src/broker/types.js';
import { githubVendor } from '../../src/mockvendor/github.js';
import { type MockVendor, startMockVendor } from '../../src/mockvendor/server.js';
import { createRunner, type Runner, type RunInput } from '../../src/runs/index.js';
import { openPostgresStore, type PostgresStoreOptions } from '../../src/store/postgres.js';
import type { Store } from '../../src/store/types.js';
import { leakGuard } from '../helpers/leaks.js';
import { freshDatabase, pgSkip, sql, startCluster } from '../helpers/postgres.js';
import { atWrite, githubConnection, githubExtension, REAL_TOKEN } from '../runs/fixtures.js';
import { tempDir } from './fixtures/index.js';

const skip = pgSkip();

interface Teardown {
  teardown(fn: () => unknown): void;
}

interface Host {
  runner: Runner;
  store: Store;
  logged: { msg: string; code?: string }[];
  /** every event the engine emitted, as it emitted it (before any store write) */
  emitted: AuditEvent[];
}

/** One broker host: its own broker, its own store on `url`, its own runner. */
async function host(
  t: Teardown,
  vendor: MockVendor,
  url: string,
  opts: PostgresStoreOptions = {},
): Promise<Host> {
  const guard = leakGuard([REAL_TOKEN]);
  const emitted: AuditEvent[] = [];
  const broker = await createBroker({
    upstream: { ca: vendor.caPem, resolve: vendor.resolve, allowAddresses: ['127.0.0.0/8'] },
    logger: guard.logger,
    onAudit: (e) => {
      emitted.push(e);
      guard.onAudit(e);
    },
  });
  const store = await openPostgresStore(url, { migrate: true, ...opts });
  const logged: Host['logged'] = [];
  const logger = Object.assign(Object.create(guard.logger), {
    error(obj: { err?: { code?: string } }, msg: string) {
      logged.push({ msg, ...(obj?.err?.code ? { code: obj.err.code } : {}) });
    },
  });
  const runner = createRunner({ broker, store, logger });
  t.teardown(async () => {
    await broker.close();
    await store.close();
    guard.assertClean();
  });
  return { runner, store, logged, emitted };
}

function input(args: string[], over: Partial<RunInput> = {}): RunInput {
  return {
    extension: githubExtension,
    cli: 'curl',
    args,
    connection: githubConnection,
    tier: atWrite.tier,
    context: { kind: 'agent-step', tool: 'curl_cli', toolArgs: { argv: args } },
    deadlineMs: 60_000,
    ...over,
  };
}

t.test(
  "broker A's run pauses, broker B approves and resumes it, a third attempt anywhere is refused",
  { skip },
  async (t) => {
    const vendor = await startMockVendor(githubVendor({ token: REAL_TOKEN }));
    t.teardown(() => vendor.close());
    const url = await freshDatabase(t);
    const a = await host(t, vendor, url);
    const b = await host(t, vendor, url);
    const c = await host(t, vendor, url);
    const cmd = input(['-sS', '-f', '-X', 'DELETE', 'https://api.github.com/repos/acme/app']);

    const paused = await a.runner.run(cmd);
    t.equal(paused.status, 'paused', paused.stderr);
    if (paused.status !== 'paused') return;
    t.equal(vendor.log.filter((r) => r.method === 'DELETE').length, 0, 'nothing deleted yet');

    t.match(
      await b.store.listApprovals({ status: 'pending' }),
      [{ id: paused.approval.id }],
      'B sees the pending approval A recorded',
    );
    await b.runner.approve(paused.approval.id, 'alice@example.com');
    const done = await b.runner.resume(paused.approval.id, cmd);
    t.equal(done.status, 'completed', done.stderr);
    t.equal(done.runId, paused.runId, 'the resumed run keeps its id');
    t.equal(vendor.log.filter((r) => r.method === 'DELETE').length, 1, 'deleted exactly once');

    for (const [name, h] of Object.entries({ A: a, B: b, C: c })) {
      await t.rejects(
        h.runner.resume(paused.approval.id, cmd),
        { code: 'APPROVAL_NOT_PENDING' },
        `a third attempt on ${name} is refused`,
      );
      await t.rejects(
        h.runner.approve(paused.approval.id, 'mallory@example.com'),
        { code: 'APPROVAL_NOT_PENDING' },
        `and it cannot be approved again on ${name}`,
      );
    }
    t.equal(vendor.log.filter((r) => r.method === 'DELETE').length, 1, 'still exactly once');

    // One trail for the run, whichever broker wrote it.
    const trail = (await c.store.listEvents({ runId: paused.runId })).map((e) => e.event.type);
    t.same(
      trail.filter((x) => x.startsWith('extension.execution')),
      [
        'extension.execution.failed',
        'extension.execution.succeeded',
        'extension.execution.failed',
        'extension.execution.failed',
        'extension.execution.failed',
      ],
    );
    t.same(
      trail.filter((x) => x.startsWith('egress')),
      ['egress.blocked', 'egress.allowed'],
      'the refused DELETE on A, the approved one on B',
    );
  },
);

t.test(
  'PostgreSQL stopped mid-run: the call fails with STORE_UNAVAILABLE; what was acknowledged is kept',
  { skip, timeout: 120_000 },
  async (t) => {
    const server = await startCluster();
    t.teardown(() => server.destroy());
    const vendor = await startMockVendor(githubVendor({ token: REAL_TOKEN }));
    t.teardown(() => vendor.close());
    const url = server.urlOf('postgres');
    const h = await host(t, vendor, url, { reconnectWindowMs: 500 });

    // A fast GET, then a slow upload (curl's rate limit): the server goes away during the upload.
    const dir = tempDir(t);
    const body = join(dir, 'body.json');
    writeFileSync(body, JSON.stringify({ title: 'x', body: 'y'.repeat(48_000) }));
    const args = [
      '-sS',
      '-f',
      'https://api.github.com/user',
      '--next',
      '-sS',
      '-f',
      '--limit-rate',
      '16k',
      '-X',
      'POST',
      '-H',
      'content-type: application/json',
      '--data-binary',
      `@${body}`,
      'https://api.github.com/repos/acme/app/issues',
    ];
    const run = h.runner.run(input(args)).then(
      (r) => ({ status: r.status, code: undefined as string | undefined }),
      (e: { code?: string }) => ({ status: 'threw', code: e.code }),
    );
    // Stop once the GET's event is stored (acknowledged), while the POST is still uploading.
    while ((await h.store.listEvents({ type: 'egress.allowed' })).length === 0)
      await new Promise((r) => setTimeout(r, 20));
    server.stop!('immediate');
    const outcome = await run;
    t.same(outcome, { status: 'threw', code: 'STORE_UNAVAILABLE' }, 'the call failed with a code');
    t.match(
      h.logged,
      [{ msg: 'clibroker: audit event not stored', code: 'STORE_UNAVAILABLE' }],
      "the POST's event, not acknowledged, was reported with its code",
    );

    server.start!();
    const after = await h.store.listEvents();
    t.match(
      after.map((e) => e.event),
      [{ type: 'egress.allowed', method: 'GET', path: '/user' }],
      'the acknowledged event survived the crash of the server',
    );
    t.ok(
      (await h.store.appendEvent(after[0]!.event)) > after[0]!.seq,
      'the same store works again without reopening',
    );
  },
);

t.test(
  'an allowed request never waits on the database: answered while audit writes are blocked',
  { skip },
  async (t) => {
    const vendor = await startMockVendor(githubVendor({ token: REAL_TOKEN }));
    t.teardown(() => vendor.close());
    const url = await freshDatabase(t);
    const h = await host(t, vendor, url);
    // Another client blocks every INSERT into the trail (reads still pass) until it commits.
    const { default: pg } = await import('pg');
    const blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    t.teardown(() => blocker.end());
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE audit_events IN EXCLUSIVE MODE');

    let settled = false;
    const run = h.runner
      .run(
        input(['-sS', '-f', 'https://api.github.com/user'], {
          tier: {
            requested: 'read',
            organizationCeiling: 'write',
            assignmentAllow: 'write',
            identity: 'assigned',
          },
        }),
      )
      .finally(() => {
        settled = true;
      });
    while (!h.emitted.some((e) => e.type === 'egress.allowed')) await new Promise((r) => setTimeout(r, 20));
    t.match(
      h.emitted,
      [{ type: 'egress.allowed', status: 200, outcome: 'sent' }],
      'the vendor answered and the response went back to curl',
    );
    t.equal(vendor.log.length, 1);
    t.same(
      await sql(url, 'SELECT seq FROM audit_events'),
      [],
      'while its audit event still waits for the database',
    );
    t.notOk(
      settled,
      'the run itself waits for its events before it reports (its execution event comes after them)',
    );

    await blocker.query('COMMIT');
    const r = await run;
    t.equal(r.status, 'completed', r.stderr);
    t.same(
      (await h.store.listEvents({ runId: r.runId })).map((e) => e.event.type),
      ['egress.allowed', 'extension.execution.succeeded'],
      'then both are stored, in order',
    );
  },
);
