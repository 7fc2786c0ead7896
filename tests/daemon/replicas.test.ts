import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t, { type Test } from 'tap';
import type { OperatorConfig } from '../../src/config/types.js';
import { buildBinary } from '../cli/fixtures/helpers.js';
import { freshDatabase, pgSkip } from '../helpers/postgres.js';
import { GHE, SEED_SECRETS, seedDeployment } from '../helpers/seed.js';
import { type Ran, runBinary, spawnDaemon } from './helpers.js';

// Daemons on several hosts over one PostgreSQL store (docs/daemon.md, "Daemons on several
// hosts"), as operators run them: the built binary, the seed deployment's configuration with
// its store changed to a PostgreSQL database named by a 0600 URL file, migrated with
// `clibroker store migrate --config`, and two `clibroker daemon` processes D1 and D2, each
// from its own copy of the configuration that differs only in `daemon.socket`, both at tier
// write. A tier switch raised once counts on both; a destructive call paused through D1 is
// approved with `clibroker approvals approve --config` and resumed through D2's socket,
// reaching the vendor once; resuming it again through D1 sends nothing; every execution
// event of both daemons is in the one store; D1 SIGKILLed, D2 still serves. Nothing of our
// code is mocked: the vendor is the seed's mock, in this process, so its log is read directly.

t.setTimeout(600_000);

const skip = pgSkip(); // under CI=1 a missing PostgreSQL throws: the file fails, never skips
if (skip) {
  t.pass(skip);
} else {
  // one parent test: tap ends a file's root test when its queue runs dry between subtests
  await t.test('two daemons over one PostgreSQL store', (t) => hosts(t));
}

type Daemon = Awaited<ReturnType<typeof spawnDaemon>>;

async function hosts(t: Test): Promise<void> {
  const { bin } = await buildBinary();
  t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));
  const url = await freshDatabase(t);
  const password = new URL(url).password;

  // the seed deployment over the database: the URL in a 0600 file next to the configuration
  const d = await seedDeployment((c, dir) => {
    const urlFile = join(dir.dir, 'store.url');
    writeFileSync(urlFile, `${url}\n`, { mode: 0o600 });
    return { ...c, store: { postgres: { file: urlFile }, poolSize: 4 } };
  });
  const live: Daemon[] = [];
  const hostDirs: string[] = [];
  t.teardown(async () => {
    for (const p of live)
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(live.map((p) => p.exited));
    for (const h of hostDirs) rmSync(h, { recursive: true, force: true });
    await d.close();
  });

  /** One host: its own directory, its own copy of the configuration, its own socket. */
  const host = (name: string, over: (c: OperatorConfig) => OperatorConfig = (c) => c) => {
    const dir = mkdtempSync(join(tmpdir(), `clibroker-host-${name}-`));
    hostDirs.push(dir);
    const socket = join(dir, 'broker.sock');
    const config: OperatorConfig = over({ ...d.config, daemon: { socket, cliTier: 'write' } });
    const file = join(dir, 'config.json');
    writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
    return { name, socket, file };
  };
  const h1 = host('d1');
  const h2 = host('d2');
  const outputs: Ran[] = [];
  const cli = async (args: string[], env: Record<string, string> = {}): Promise<Ran> => {
    const r = await runBinary(bin, args, env);
    outputs.push(r);
    return r;
  };
  /** An operator command against the store `file` names (as on that host). */
  const operator = (file: string, args: string[]) => cli([...args, '--config', file]);
  /** `clibroker run` / `resume` through the daemon of `h`. */
  const agent = (h: { socket: string }, args: string[]) => cli(args, { CLIBROKER_SOCKET: h.socket });
  const write = ['run', 'gh_cli', '--', 'api', '-X', 'POST', 'repos/acme/app/issues', '-f', 'title=x'];
  const read = ['run', 'gh_cli', '--', 'api', 'user'];
  const deletes = () => d.vendor.log.filter((r) => r.method === 'DELETE').length;
  /** runIds of the calls that ran, by daemon */
  const ran: Record<string, string[]> = { d1: [], d2: [] };

  let D1!: Daemon;
  let D2!: Daemon;
  await t.test('the database is migrated, then both daemons serve it', async (t) => {
    const early = await cli(['daemon', '--config', h1.file]);
    t.not(early.code, 0, 'a daemon does not start on an unmigrated database');
    t.match(early.stdout + early.stderr, /STORE_SCHEMA_OUTDATED/);
    const m = await operator(h1.file, ['store', 'migrate']);
    t.equal(m.code, 0, m.stdout + m.stderr);
    t.match(m.env, { success: true, data: { backend: 'postgres' } });

    D1 = await spawnDaemon(bin, h1.file);
    live.push(D1);
    D2 = await spawnDaemon(bin, h2.file);
    live.push(D2);
    t.match(D1.listening, {
      event: 'daemon.listening',
      socket: h1.socket,
      tools: ['gh_cli', 'curl_cli', 'az_cli'],
    });
    t.match(D2.listening, {
      event: 'daemon.listening',
      socket: h2.socket,
      tools: ['gh_cli', 'curl_cli', 'az_cli'],
    });
    t.not(D1.listening['pid'], D2.listening['pid'], 'two processes');
    for (const h of [h1, h2]) {
      const r = await agent(h, read);
      t.match(
        r.env,
        { success: true, data: { exitCode: 0, cliTier: 'read' } },
        `${h.name}: ${r.stdout}${r.stderr}`,
      );
      if (r.env?.data?.runId) ran[h.name]!.push(r.env.data.runId);
    }
  });

  await t.test('one tier switch, in the store: raised once, both daemons run at write', async (t) => {
    const posts = () => d.vendor.log.filter((r) => r.method === 'POST' && r.host === GHE).length;
    for (const h of [h1, h2]) {
      const r = await agent(h, write);
      t.match(
        r.env,
        {
          success: false,
          error: { code: 'POLICY_BLOCKED', details: { policyCode: 'CLI_REQUEST_TIER_DENIED' } },
        },
        `${h.name}: a write is refused before the switch is raised`,
      );
    }
    t.equal(posts(), 0, 'no write reached the vendor');

    const raised = await operator(h1.file, [
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
    ]);
    t.equal(raised.code, 0, raised.stdout + raised.stderr);

    for (const h of [h1, h2]) {
      const r = await agent(h, write);
      t.match(
        r.env,
        { success: true, data: { exitCode: 0, cliTier: 'write' } },
        `${h.name}: ${r.stdout}${r.stderr}`,
      );
      if (r.env?.data?.runId) ran[h.name]!.push(r.env.data.runId);
    }
    t.equal(posts(), 2, 'each daemon sent its write once');
  });

  let approvalId = '';
  await t.test('paused through D1, approved by an operator, resumed through D2, sent once', async (t) => {
    const paused = await agent(h1, ['run', 'gh_cli', '--', 'api', '-X', 'DELETE', 'repos/acme/app']);
    t.match(paused.env, {
      success: false,
      error: { code: 'CLI_APPROVAL_PENDING', details: { approvalId: String } },
    });
    approvalId = paused.env?.error?.details?.approvalId ?? '';
    t.ok(approvalId, 'an approval id');
    t.equal(deletes(), 0, 'nothing deleted yet');

    // the operator lists it through the other host's configuration: one store
    const list = await operator(h2.file, ['approvals', 'list', '--status', 'pending']);
    t.equal(list.code, 0, list.stdout + list.stderr);
    t.match(
      list.env?.data?.approvals?.find((a: { id: string }) => a.id === approvalId),
      { id: approvalId, status: 'pending', method: 'DELETE', host: GHE },
      'approvals list shows the paused call',
    );
    const early = await agent(h2, ['resume', approvalId]);
    t.match(
      early.env,
      { success: false, error: { code: 'APPROVAL_NOT_PENDING' } },
      'resuming before a person approved fails',
    );
    t.equal(deletes(), 0);

    const approved = await operator(h2.file, ['approvals', 'approve', '--id', approvalId, '--by', 'alice']);
    t.equal(approved.code, 0, approved.stdout + approved.stderr);
    t.match(approved.env, { success: true, data: { status: 'approved', approvalId } });

    const resumed = await agent(h2, ['resume', approvalId]);
    t.match(
      resumed.env,
      { success: true, data: { exitCode: 0, cliTier: 'write' } },
      `D2 returns the re-run's output: ${resumed.stdout}${resumed.stderr}`,
    );
    if (resumed.env?.data?.runId) ran['d2']!.push(resumed.env.data.runId);
    t.equal(deletes(), 1, 'the vendor saw the DELETE once');
    t.ok(
      d.vendor.log.some((r) => r.method === 'DELETE' && r.host === GHE && r.path.endsWith('/repos/acme/app')),
      'the approved request itself',
    );

    const again = await agent(h1, ['resume', approvalId]);
    t.match(
      again.env,
      { success: false, error: { code: 'APPROVAL_NOT_PENDING' } },
      `resuming it again through D1 is refused: ${again.stdout}${again.stderr}`,
    );
    t.equal(deletes(), 1, 'and sends nothing');
    const shown = await operator(h1.file, ['approvals', 'show', '--id', approvalId]);
    t.match(shown.env, { success: true, data: { id: approvalId, status: 'consumed' } }, shown.stdout);
  });

  await t.test('every execution event of both daemons is in the one store', async (t) => {
    const q = await operator(h1.file, [
      'audit',
      'query',
      '--type',
      'extension.execution.succeeded',
      '--limit',
      '1000',
    ]);
    t.equal(q.code, 0, q.stdout + q.stderr);
    const events: { event: { runId: string; cliTier: string } }[] = q.env?.data?.events ?? [];
    const runIds = new Set(events.map((e) => e.event.runId));
    t.equal(ran['d1']!.length, 2, 'D1 ran a read and a write');
    t.equal(ran['d2']!.length, 3, 'D2 ran a read, a write and the resumed DELETE');
    for (const [name, ids] of Object.entries(ran))
      for (const id of ids) t.ok(runIds.has(id), `${name}'s run ${id} is in the store`);
    t.equal(events.length, 5, 'and nothing else succeeded');
    // the refusals and the pause are audited there too, as failed runs
    const f = await operator(h2.file, [
      'audit',
      'query',
      '--type',
      'extension.execution.failed',
      '--limit',
      '1000',
    ]);
    t.equal(f.code, 0, f.stdout + f.stderr);
    t.ok(
      (f.env?.data?.events ?? []).length >= 1,
      `failed runs are there too: ${(f.env?.data?.events ?? []).length}`,
    );
  });

  await t.test('D1 killed, D2 still serves', async (t) => {
    D1.child.kill('SIGKILL');
    await D1.exited;
    t.equal(D1.child.signalCode, 'SIGKILL', 'D1 is gone');
    const gone = await agent(h1, read);
    t.match(
      gone.env,
      { success: false, error: { code: 'DAEMON_UNAVAILABLE' } },
      'nothing answers on D1’s socket',
    );
    const r = await agent(h2, read);
    t.match(r.env, { success: true, data: { exitCode: 0 } }, `D2 answers: ${r.stdout}${r.stderr}`);
    t.match(JSON.parse(r.env?.data?.stdout ?? '{}'), { login: 'octocat' });
  });

  await t.test('no secret and no database password in any output', async (t) => {
    const all = [...outputs.map((r) => r.stdout + r.stderr), ...live.map((p) => p.out() + p.err())].join(
      '\n',
    );
    for (const s of [...SEED_SECRETS, password]) t.notOk(all.includes(s), 'not printed');
  });
}
