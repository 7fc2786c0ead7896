import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { ExecutionEvent } from '../../src/store/types.js';
import { buildBinary } from '../cli/fixtures/helpers.js';
import { stdioClient } from './helpers.js';
import { seedDeployment } from '../helpers/seed.js';

// Cancelling a call over `clibroker serve --mcp stdio`, as an MCP host does it: the SDK's own
// client aborts its request (it sends notifications/cancelled), and the run's process group is
// killed at once — the CLI sends nothing more — and the call is audited SERVE_CALL_CANCELLED,
// as over HTTP. curl with `--rate 6/m` waits 10 s between its two URLs: a run that sends the
// second one unless it is killed.

t.setTimeout(300_000);
const { bin } = await buildBinary();
t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));

/** The pids of the processes whose command line holds `marker` (bwrap, the launcher, the CLI). */
function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('a cancelled call: its process group is killed, the call is audited', async (t) => {
  const d = await seedDeployment();
  const { client, transport, stderr: serverErr } = stdioClient(bin, d.file);
  t.teardown(async () => {
    await client.close().catch(() => {});
    await d.close();
  });
  await client.connect(transport);

  // a path no other run uses: it names this call's processes and its requests
  const marker = `cancel-${randomUUID()}`;
  const base = `https://api.bitbucket.org/2.0/${marker}`;
  const seen = (suffix: string) => d.vendor.log.some((r) => r.path === `/2.0/${marker}/${suffix}`);
  const ac = new AbortController();
  const call = client.callTool(
    { name: 'curl_cli', arguments: { args: ['-s', '--rate', '6/m', `${base}/a`, `${base}/b`] } },
    undefined,
    { signal: ac.signal, timeout: 120_000 },
  );
  call.catch(() => {});
  for (let i = 0; i < 600 && !seen('a'); i++) await sleep(100);
  t.ok(seen('a'), 'the CLI is running: the vendor received /a');
  t.ok(processesWith(marker).length > 0, "the call's processes are running");
  t.notOk(seen('b'), 'and curl waits before /b');

  ac.abort('the agent moved on');
  await t.rejects(call, 'the client sees its own cancellation');

  // generous bounds, no duration asserted: the processes go at once when the group is killed
  let left = processesWith(marker);
  for (let i = 0; i < 600 && left.length > 0; i++) {
    await sleep(100);
    left = processesWith(marker);
  }
  t.same(left, [], 'no process of the call remains (bwrap, the launcher, curl)');
  t.notOk(seen('b'), 'the vendor never received /b');

  // the session ends when the client closes stdin; the store is then read as the server left it
  await client.close();
  for (let i = 0; i < 100 && !serverErr().includes('serve.mcp.stopped'); i++) await sleep(100);
  t.match(serverErr(), /serve\.mcp\.stopped/, 'the session ended');
  const store = await openSqliteStore(join(d.dir.dir, 'state', 'store.db'));
  try {
    const events = (
      await store.listEvents({ type: 'extension.execution.failed', extensionId: 'atlassian' })
    ).map((e) => e.event as ExecutionEvent);
    const ev = events.find((e) => e.code === 'SERVE_CALL_CANCELLED');
    t.ok(ev, 'the cancellation is audited: SERVE_CALL_CANCELLED');
    t.ok(
      events.some((e) => e.runId === ev?.runId && e.signal === 'SIGKILL'),
      "the run's own event says its CLI was killed",
    );
  } finally {
    await store.close();
  }
  t.match(serverErr(), /serve\.call\.cancelled/, 'and logged');
  t.notOk(seen('b'), 'still no /b');
});

t.test(
  'over stdio nothing waits for a person: a destructive request answers CLI_APPROVAL_PENDING',
  async (t) => {
    const d = await seedDeployment((c, dir) => ({
      ...c,
      daemon: { socket: join(dir.dir, 'broker.sock'), cliTier: 'write' },
    }));
    t.teardown(() => d.close());
    // the operator's switch, raised before the server starts (its host opens the same store)
    mkdirSync(join(d.dir.dir, 'state'), { recursive: true, mode: 0o700 });
    const store = await openSqliteStore(join(d.dir.dir, 'state', 'store.db'));
    await store.setAssignmentTier({
      extensionId: 'github',
      assignmentId: 'default',
      cliId: 'gh',
      tier: 'write',
      who: 'admin@example.com',
    });
    await store.close();
    const { client, transport } = stdioClient(bin, d.file);
    t.teardown(() => client.close().catch(() => {}));
    await client.connect(transport);
    const r = await client.callTool(
      { name: 'gh_cli', arguments: { args: ['repo', 'delete', 'acme/app', '--yes'] } },
      undefined,
      { timeout: 120_000 },
    );
    t.equal(r.isError, true, JSON.stringify(r));
    t.match(r.structuredContent, {
      error: { code: 'CLI_APPROVAL_PENDING', details: { approvalId: String } },
    });
    t.notOk(
      d.vendor.log.some((x) => x.method === 'DELETE'),
      'nothing was sent',
    );
  },
);
