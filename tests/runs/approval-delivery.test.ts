/**
 * An approval is spent only on a request that may have reached the vendor. The re-run's
 * destructive request first meets a vendor whose port refuses connections (502
 * UPSTREAM_UNAVAILABLE, "not sent"): the approval must come back approved, and the next
 * re-run must go through and consume it. A request the vendor did receive keeps its
 * approval consumed, whatever the vendor answered.
 */
import { createServer } from 'node:net';
import t from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import { githubVendor } from '../../src/mockvendor/github.js';
import { startMockVendor } from '../../src/mockvendor/server.js';
import { createRunner } from '../../src/runs/index.js';
import { openSqliteStore } from '../../src/store/index.js';
import { atWrite, githubConnection, githubExtension, REAL_TOKEN } from './fixtures.js';

/** A loopback port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

async function setup(t: { teardown(fn: () => unknown): void }) {
  const vendor = await startMockVendor(githubVendor({ token: [REAL_TOKEN] }));
  const refused = await closedPort();
  const route = { down: false };
  const broker = await createBroker({
    upstream: {
      ca: vendor.caPem,
      resolve: (host) => (route.down ? { host: '127.0.0.1', port: refused } : vendor.resolve(host)),
      allowAddresses: ['127.0.0.0/8'],
    },
  });
  const store = openSqliteStore(':memory:');
  const runner = createRunner({ broker, store });
  t.teardown(async () => {
    await broker.close();
    await vendor.close();
    await store.close();
  });
  const input = {
    extension: githubExtension,
    cli: 'curl',
    args: ['-sS', '-f', '-X', 'DELETE', 'https://api.github.com/repos/acme/app'],
    connection: githubConnection,
    context: { kind: 'agent-step' as const, tool: 'curl_cli', toolArgs: {} },
    deadlineMs: 60_000,
    ...atWrite,
  };
  return { vendor, route, store, runner, input };
}

const deletes = (log: { method: string }[]): number => log.filter((r) => r.method === 'DELETE').length;

t.test('a re-run whose request could not reach the vendor leaves the approval usable', async (t) => {
  const { vendor, route, store, runner, input } = await setup(t);
  const paused = await runner.run(input);
  if (paused.status !== 'paused') return t.fail(`expected paused, got ${paused.status}`);
  await runner.approve(paused.approval.id, 'alice@example.com');

  route.down = true;
  const failed = await runner.resume(paused.approval.id, input);
  t.not(failed.status, 'completed', 'the re-run did not complete');
  t.equal(deletes(vendor.log), 0, 'nothing reached the vendor');
  const events = await store.listEvents({ runId: paused.runId, type: 'egress.blocked' });
  t.match(
    events.map((e) => e.event).slice(-1),
    [{ code: 'UPSTREAM_UNAVAILABLE', outcome: 'not_sent', refusalStatus: 502 }],
    'the broker answered 502 UPSTREAM_UNAVAILABLE, not sent',
  );
  const released = await store.getApproval(paused.approval.id);
  t.equal(released?.status, 'approved', 'the approval is approved again');
  t.equal(released?.consumedAt, undefined, 'with no consumedAt');

  route.down = false;
  const done = await runner.resume(paused.approval.id, input);
  t.equal(done.status, 'completed', 'the next re-run goes through');
  t.equal(deletes(vendor.log), 1, 'the vendor received the DELETE once');
  const spent = await store.getApproval(paused.approval.id);
  t.equal(spent?.status, 'consumed', 'and the approval is spent');
  t.ok(spent?.consumedAt, 'with its consumedAt');
  await t.rejects(runner.resume(paused.approval.id, input), { code: 'APPROVAL_NOT_PENDING' }, 'single use');
});

t.test('a request the vendor received spends the approval even when it answered with an error', async (t) => {
  const { vendor, store, runner, input } = await setup(t);
  // The mock vendor answers 404 for a hook it does not know.
  const missing = {
    ...input,
    args: ['-sS', '-X', 'DELETE', 'https://api.github.com/repos/acme/app/hooks/1'],
  };
  const paused = await runner.run(missing);
  if (paused.status !== 'paused') return t.fail(`expected paused, got ${paused.status}`);
  await runner.approve(paused.approval.id, 'alice@example.com');
  await runner.resume(paused.approval.id, missing);
  t.equal(deletes(vendor.log), 1, 'the vendor received it');
  t.equal((await store.getApproval(paused.approval.id))?.status, 'consumed');
});
