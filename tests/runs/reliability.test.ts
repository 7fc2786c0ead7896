import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import { defineExtension } from '../../src/manifest/define.js';
import { githubVendor } from '../../src/mockvendor/github.js';
import { startMockVendor } from '../../src/mockvendor/server.js';
import { createRunner } from '../../src/runs/index.js';
import { openSqliteStore } from '../../src/store/index.js';
import { atWrite, githubConnection, githubExtension, runFixture, runToken } from './fixtures.js';

t.test(
  "20 concurrent runs on one broker: each its own tier, budget and credential, none sees another's",
  async (t) => {
    const f = await runFixture(t, { extraTokens: 20 });
    const runs = Array.from({ length: 20 }, (_, i) => {
      const write = i % 2 === 0;
      const args = [
        '-sS',
        '-X',
        'POST',
        '-H',
        'content-type: application/json',
        '-H',
        `x-run: ${i}`,
        '--data',
        JSON.stringify({ query: 'mutation { addStar(input: {starrableId: "x"}) { clientMutationId } }' }),
        'https://api.github.com/graphql',
      ];
      return f.runner.run(
        f.input('curl', args, {
          ...(write ? atWrite : {}),
          connection: { kind: 'oauth_access_token', accessToken: runToken(i) },
        }),
      );
    });
    const results = await Promise.all(runs);
    results.forEach((r, i) => {
      // curl exits 0 on the 422 (no -f): the tier denial still decides the read runs.
      t.equal(r.status, i % 2 === 0 ? 'completed' : 'refused', `run ${i}`);
      t.equal(r.requests, 1, `run ${i} saw only its own request`);
      if (i % 2 === 0)
        t.same(
          JSON.parse(r.stdout),
          { data: { addStar: { clientMutationId: null } } },
          `run ${i} (write) passed`,
        );
      else t.match(r.stdout, /CLI_REQUEST_TIER_DENIED/, `run ${i} (read) was refused`);
    });
    t.same(
      f.vendor.log.map((r) => Number(r.headers['x-run'])).sort((a, b) => a - b),
      [0, 2, 4, 6, 8, 10, 12, 14, 16, 18],
    );
    for (const r of f.vendor.log)
      t.equal(
        r.headers.authorization,
        `token ${runToken(Number(r.headers['x-run']))}`,
        `run ${r.headers['x-run']} carried its own credential`,
      );
    t.equal(new Set(results.map((r) => r.runId)).size, 20);
    for (const r of results) {
      const events = await f.store.listEvents({ runId: r.runId, type: ['egress.allowed', 'egress.blocked'] });
      t.equal(events.length, 1, 'each run has exactly its own egress event');
    }
  },
);

// The CLI sleeps an hour: the run returning at all (within the test's limit) is the deadline's kill.
t.test('a CLI that hangs is killed at the deadline', { timeout: 60_000 }, async (t) => {
  const f = await runFixture(t);
  const ext = defineExtension({
    ...githubExtension,
    id: 'sleepy',
    clis: [{ id: 'sleep', binary: { image: 'plain', entrypoint: '/bin/sleep' } }],
  });
  const r = await f.runner.run({ ...f.input('sleep', ['3600']), extension: ext, deadlineMs: 1_000 });
  t.equal(r.status, 'timed_out', 'ended by the deadline');
  const ev = await f.store.listEvents({ runId: r.runId, type: 'extension.execution.failed' });
  t.match(ev[0]?.event, { code: 'CLI_TIMEOUT' });
});

t.test('a broker restarted mid-approval keeps the pending approval and every audit event', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'clibroker-restart-'));
  const dbPath = join(dir, 'store.db');
  const vendor = await startMockVendor(
    githubVendor({
      token: githubConnection.kind === 'oauth_access_token' ? githubConnection.accessToken : '',
    }),
  );
  t.teardown(() => vendor.close());
  const input = {
    extension: githubExtension,
    cli: 'gh',
    args: ['repo', 'delete', 'acme/app', '--yes'],
    connection: githubConnection,
    tier: {
      requested: 'write',
      organizationCeiling: 'write',
      assignmentAllow: 'write',
      identity: 'assigned',
    } as const,
    context: { kind: 'agent-step' as const, tool: 'gh_cli' },
    deadlineMs: 60_000,
  };

  const broker1 = await createBroker({
    upstream: { ca: vendor.caPem, resolve: vendor.resolve, allowAddresses: ['127.0.0.0/8'] },
  });
  const store1 = openSqliteStore(dbPath);
  const paused = await createRunner({ broker: broker1, store: store1 }).run(input);
  t.equal(paused.status, 'paused');
  const before = await store1.listEvents({ runId: paused.runId });
  await broker1.close();
  await store1.close();

  const broker2 = await createBroker({
    upstream: { ca: vendor.caPem, resolve: vendor.resolve, allowAddresses: ['127.0.0.0/8'] },
  });
  const store2 = openSqliteStore(dbPath);
  t.teardown(async () => {
    await broker2.close();
    await store2.close();
  });
  const runner2 = createRunner({ broker: broker2, store: store2 });
  const pending = await store2.listApprovals({ status: 'pending' });
  t.equal(pending.length, 1);
  t.same(await store2.listEvents({ runId: paused.runId }), before, 'every audit event survived the restart');
  await runner2.approve(pending[0]!.id, 'alice@example.com');
  const done = await runner2.resume(pending[0]!.id, input);
  t.equal(done.status, 'completed', done.stderr);
  t.equal(vendor.log.filter((r) => r.method === 'DELETE').length, 1);
});
