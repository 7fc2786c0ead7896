import { request } from 'node:http';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t, { type Test } from 'tap';
import { buildBinary } from '../cli/fixtures/helpers.js';
import { runBinary } from '../daemon/helpers.js';
import { freshDatabase, type PgServer, pgSkip, sql, startCluster, testServer } from '../helpers/postgres.js';
import { chromium, chromiumMissing } from '../helpers/chromium.js';
import { GHE, type SeedDeployment, seedDeployment } from '../helpers/seed.js';
import { type Json, TOKENS } from './helpers.js';
import { type Replica, spawnServe, startReplica, until } from './replica-process.js';

// Several `clibroker serve` replicas over one PostgreSQL store (docs/serve.md, "Several
// replicas over one PostgreSQL store"), as an operator runs them: the built binary, one
// configuration whose store names the database by a variable, the database migrated by
// `clibroker store migrate --config` first. A call held on replica A is shown waiting, with its
// countdown, on B's page in a real chromium, approved there, and A returns the re-run; a call
// held on A when A is SIGKILLed stays pending, A's hold on it lapses, and it is approved on B
// and resumed there; forty concurrent runs on two replicas leave forty
// execution events in the one store; a review session is every replica's; /healthz follows
// the database down and up again. Nothing of our code is mocked: the vendor is the seed's
// mock (in this process, so its request log is read directly).

t.setTimeout(240_000);
const URL_VAR = 'CLIBROKER_STORE_URL';

const skip = pgSkip(); // under CI=1 a missing PostgreSQL throws: the file fails, never skips
if (skip) {
  t.pass(skip);
} else {
  // one parent test: tap ends a file's root test when its queue runs dry between subtests
  await t.test('several replicas over one PostgreSQL store', (t) => replicas(t));
}

async function replicas(t: Test): Promise<void> {
  const noBrowser = chromiumMissing();
  if (noBrowser && process.env['CI']) throw new Error(`CI needs the browser test: ${noBrowser}`);

  const { bin } = await buildBinary();
  t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));

  const server = await testServer();
  const dbUrl = await freshDatabase(t, server);
  const env = { [URL_VAR]: dbUrl };

  /** The seed deployment over the database `url`: the store by variable, every serve token, write for the executor. */
  const deployment = (): Promise<SeedDeployment> =>
    seedDeployment((c, dir) => ({
      ...c,
      store: { postgres: { env: URL_VAR } },
      serve: {
        port: 0,
        executorToken: dir.secret('executor', TOKENS.executor),
        mcpToken: dir.secret('mcp', TOKENS.mcp),
        reviewers: { alice: dir.secret('alice', TOKENS.alice), bob: dir.secret('bob', TOKENS.bob) },
        cliTier: 'write',
        executorMaxTier: 'write',
        approvalTimeoutSeconds: 600,
      },
    }));

  const d = await deployment();
  const live: Replica[] = [];
  const clients: Client[] = [];
  let closed = false;
  t.teardown(async () => {
    closed = true;
    for (const c of clients) await c.close().catch(() => {});
    await Promise.all(live.map((r) => r.stop()));
    await d.close();
  });
  const replica = async (name: string, file = d.file, e = env): Promise<Replica> => {
    const r = await startReplica(bin, name, file, e);
    live.push(r);
    // a test that failed can end this one while a replica starts: it must not outlive the file
    if (closed) {
      await r.stop();
      throw new Error(`replica ${name} started after the test ended`);
    }
    return r;
  };
  const deletes = (): number => d.vendor.log.filter((r) => r.method === 'DELETE').length;

  /** The approvals pending on `r` that are not in `seen`, once there is one. */
  const newPending = (r: Replica, seen: Set<string>) =>
    until('a new pending approval', async () => {
      const a = await r.call('GET', '/v1/approvals?status=pending', TOKENS.alice);
      const fresh = (a.json.result?.approvals ?? []).filter((x: { id: string }) => !seen.has(x.id));
      return fresh.length > 0 ? fresh[0] : undefined;
    });
  const decided = new Set<string>();
  /** `clibroker tiers set`: gh's allow switch raised to write in the store `e` names. */
  const raiseGh = (e: Record<string, string>) =>
    runBinary(
      bin,
      [
        'tiers',
        'set',
        '--config',
        d.file,
        '--extension',
        'github',
        '--cli',
        'gh',
        '--tier',
        'write',
        '--by',
        'admin@example.com',
      ],
      e,
    );

  await t.test('the database is migrated before any replica serves it', async (t) => {
    const refused = await spawnServe(bin, 'early', d.file, env);
    if (refused.listening) {
      await refused.replica.stop();
      t.fail('serve listened on an unmigrated database');
      return;
    }
    t.not(refused.code, 0, 'serve exits non-zero on an unmigrated database');
    t.match(`${refused.stdout}${refused.stderr}`, /STORE_SCHEMA_OUTDATED/, 'and says why');
    t.notOk(`${refused.stdout}${refused.stderr}`.includes(dbUrl), 'the URL is never printed');
    const tables = await sql(
      dbUrl,
      "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'",
    );
    t.same(tables, [{ n: 0 }], 'and changed nothing: a replica never migrates a shared database');

    const migrated = await runBinary(bin, ['store', 'migrate', '--config', d.file], env);
    t.equal(migrated.code, 0, migrated.stdout + migrated.stderr);
    t.notOk(migrated.stdout.includes(dbUrl), 'the URL is never printed');
    const again = await runBinary(bin, ['store', 'migrate', '--config', d.file], env);
    t.equal(again.code, 0, 'migrating again is a no-op');

    // a person raises gh's allow switch in the shared store, as for one broker
    const raised = await raiseGh(env);
    t.equal(raised.code, 0, raised.stdout + raised.stderr);
  });

  let A = await replica('A');
  const B = await replica('B');
  t.not(A.url, B.url, 'two replicas, two ports');

  await t.test('a call held on A is approved on B’s page in chromium; A returns the re-run', async (t) => {
    const browser = await chromium(t);
    if (!browser) return;
    const client = new Client({ name: 'clibroker-replicas-test', version: '0.0.0' });
    clients.push(client);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${A.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${TOKENS.mcp}` } },
      }),
    );
    const before = deletes();
    const call = client.callTool(
      { name: 'gh_cli', arguments: { args: ['repo', 'delete', 'acme/app', '--yes'] } },
      undefined,
      { timeout: 120_000 },
    );
    call.catch(() => {}); // awaited below; a test that fails before then leaves no unhandled rejection
    const a = await newPending(B, decided);
    decided.add(a.id);
    t.match(
      a.request,
      { method: 'DELETE', host: GHE, path: '/api/v3/repos/acme/app' },
      'B lists A’s approval',
    );
    t.equal(deletes(), before, 'nothing deleted while it waits');
    // A's hold on it is in the store: B knows a call waits (A records it as its wait begins)
    const waiting = await until('B to see that a call waits', async () => {
      const r = await B.call('GET', `/v1/approvals/${a.id}`, TOKENS.alice);
      return r.json.result?.waiting === true ? r.json.result : undefined;
    });
    t.match(waiting, { status: 'pending', waiting: true }, 'B’s API says a call waits for it');

    const page = await browser.newPage();
    await page.goto(`${B.url}/review`);
    await page.type('input[name=token]', TOKENS.alice);
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
    const card = `.approval[data-approval="${a.id}"]`;
    await page.waitForSelector(card);
    const shown = await page.$eval(card, (el) => ({
      method: el.querySelector('.method')?.textContent,
      host: el.querySelector('.host')?.textContent,
      path: el.querySelector('.path')?.textContent,
      left: el.querySelector('.wait.held .left')?.textContent,
    }));
    t.match(
      shown,
      { method: 'DELETE', host: GHE, path: '/api/v3/repos/acme/app' },
      'B’s page shows the request held on A',
    );
    t.match(shown.left, /^(\d+ h )?\d+ min \d+ s left$/, 'with the countdown of A’s wait');
    await Promise.all([page.waitForNavigation(), page.click(`${card} .approve`)]);
    t.equal(
      new URL(page.url()).pathname,
      `/review/approvals/${a.id}/confirm`,
      'Approve… leads to the confirmation',
    );
    t.equal(deletes(), before, 'nothing sent on the way to the confirmation');
    await Promise.all([page.waitForNavigation(), page.click('.confirm button.approve.final')]);

    const r = await call;
    t.notOk(r.isError, JSON.stringify(r));
    t.match(r.structuredContent, { exitCode: 0, cliTier: 'write' }, 'A returns the re-run’s result');
    t.equal(deletes(), before + 1, 'the vendor saw the DELETE exactly once');
    t.match(
      d.vendor.log.filter((r) => r.method === 'DELETE').at(-1),
      { host: GHE, path: '/api/v3/repos/acme/app' },
      'the DELETE that was approved',
    );
    const after = (await B.call('GET', `/v1/approvals/${a.id}`, TOKENS.alice)).json.result;
    t.match(after, { status: 'consumed', decidedBy: 'alice' }, 'consumed, decided by alice on B');
  });

  await t.test(
    'A dies while a call waits: the approval stays pending, B approves and resumes it',
    async (t) => {
      const before = deletes();
      const held = A.call('POST', '/v1/tools/execute', TOKENS.executor, {
        toolId: 'gh_cli',
        input: { args: ['repo', 'delete', 'acme/app', '--yes'] },
        cliTier: 'write',
        context: 'agent-step',
      }).then(
        (r) => ({ answered: r }),
        (e: unknown) => ({ dropped: e }),
      );
      const a = await newPending(B, decided);
      decided.add(a.id);
      await until('A’s hold to show on B', async () =>
        (await B.call('GET', `/v1/approvals/${a.id}`, TOKENS.executor)).json.result?.waiting === true
          ? true
          : undefined,
      );
      A.kill('SIGKILL');
      t.match(await A.exited, { signal: 'SIGKILL' }, 'A was killed');
      t.match(await held, { dropped: {} }, 'the caller’s connection to A is dropped');

      // A no longer renews its hold: it lapses by itself (a lease of seconds)
      const seen = await until('A’s hold to lapse', async () => {
        const r = await B.call('GET', `/v1/approvals/${a.id}`, TOKENS.executor);
        return r.status === 200 && r.json.result.waiting === undefined ? r : undefined;
      });
      t.equal(seen.json.result.status, 'pending', 'the approval outlives its replica');
      t.equal(deletes(), before, 'nothing sent');

      const approved = await B.call('POST', `/v1/approvals/${a.id}/approve`, TOKENS.bob);
      t.match(approved, {
        status: 200,
        json: { ok: true, result: { status: 'approved', decidedBy: 'bob' } },
      });
      const resumed = await B.call('POST', `/v1/approvals/${a.id}/resume`, TOKENS.executor);
      t.match(
        resumed,
        { status: 200, json: { ok: true, result: { exitCode: 0, cliTier: 'write' } } },
        JSON.stringify(resumed.json),
      );
      t.equal(deletes(), before + 1, 'the vendor saw that DELETE once');
      const again = await B.call('POST', `/v1/approvals/${a.id}/resume`, TOKENS.executor);
      t.match(again, { status: 409, json: { error: { code: 'APPROVAL_NOT_PENDING' } } }, 'resumed once');
      t.equal(deletes(), before + 1, 'and nothing more was sent');
    },
  );

  A = await replica('A2'); // A again, a new process over the same configuration

  await t.test(
    'forty concurrent runs on two replicas: forty execution events in the one store',
    async (t) => {
      const read = (r: Replica) =>
        r.call('POST', '/v1/tools/execute', TOKENS.executor, {
          toolId: 'gh_cli',
          input: { args: ['api', 'user'] },
        });
      const results = await Promise.all([
        ...Array.from({ length: 20 }, () => read(A)),
        ...Array.from({ length: 20 }, () => read(B)),
      ]);
      const failed = results.filter((r) => !(r.status === 200 && r.json.ok && r.json.result.exitCode === 0));
      t.same(failed, [], 'every call succeeded');
      const runIds = new Set<string>(results.map((r) => r.json.result?.runId));
      t.equal(runIds.size, 40, 'forty runs');
      for (const r of [A, B]) {
        const audit = await r.call(
          'GET',
          '/v1/audit?type=extension.execution.succeeded&limit=1000',
          TOKENS.executor,
        );
        t.equal(audit.status, 200, `${r.name} answers the audit`);
        const ours = (audit.json.result.events as { event: { runId: string } }[])
          .map((e) => e.event.runId)
          .filter((id) => runIds.has(id));
        t.equal(new Set(ours).size, 40, `${r.name} reads every run's execution event from the one store`);
        t.equal(ours.length, 40, 'one execution event each');
      }
    },
  );

  await t.test('a review session made on B is valid on A; signing out on A ends it on B', async (t) => {
    const login = await fetch(`${B.url}/review/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: B.url },
      body: new URLSearchParams({ token: TOKENS.bob }).toString(),
    });
    t.equal(login.status, 303, 'bob signs in on B');
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    const state = (r: Replica) => fetch(`${r.url}/review/state`, { headers: { cookie } });
    t.equal((await state(B)).status, 200, 'signed in on B');
    t.equal((await state(A)).status, 200, 'and on A with the same cookie');
    const out = await fetch(`${A.url}/review/logout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin: A.url },
    });
    t.equal(out.status, 303, 'signed out on A');
    t.equal((await state(B)).status, 401, 'the session is ended on B');
    t.equal((await state(A)).status, 401, 'and on A');
  });

  await t.test(
    'wrong tokens are counted across replicas: ten spread over A and B lock the address out on both',
    async (t) => {
      // from an address of its own (127.0.0.3), so the lock-out holds back no other step
      const from = '127.0.0.3';
      const send = (r: Replica, token: string): Promise<{ status: number; code?: string }> =>
        new Promise((resolve, reject) => {
          const req = request(
            `${r.url}/v1/tools`,
            { headers: { authorization: `Bearer ${token}` }, localAddress: from, agent: false },
            (res) => {
              let text = '';
              res.setEncoding('utf8');
              res.on('data', (c) => {
                text += c;
              });
              res.on('end', () =>
                resolve({ status: res.statusCode ?? 0, code: (JSON.parse(text) as Json).error?.code }),
              );
            },
          );
          req.on('error', reject);
          req.end();
        });
      for (let i = 0; i < 9; i++) {
        const r = await send(i % 2 === 0 ? A : B, `wrong-token-${i}-0123456789abcdef`);
        t.equal(r.code, 'SERVE_UNAUTHORIZED', `guess ${i + 1} on ${i % 2 === 0 ? 'A' : 'B'}`);
      }
      t.equal((await send(B, TOKENS.executor)).status, 200, 'nine failures in all: not locked yet');
      t.equal((await send(B, 'wrong-token-9-0123456789abcdef')).code, 'SERVE_UNAUTHORIZED', 'the tenth');
      const a = await send(A, TOKENS.executor);
      t.match(
        a,
        { status: 429, code: 'SERVE_RATE_LIMITED' },
        'A refuses the address, even with the right token',
      );
      t.match(await send(B, TOKENS.executor), { status: 429, code: 'SERVE_RATE_LIMITED' }, 'and so does B');
    },
  );

  await t.test(
    '/healthz follows the database down and up again, and held calls work once it is back',
    async (t) => {
      // a cluster this file started is stopped; a shared CI server is not: a throwaway one is
      let pg: PgServer = server;
      let watched: Replica[] = [A, B];
      if (!server.stop || !server.start) {
        pg = await startCluster();
        t.teardown(() => pg.destroy());
        const own = await freshDatabase(t, pg);
        const e = { [URL_VAR]: own };
        const m = await runBinary(bin, ['store', 'migrate', '--config', d.file], e);
        t.equal(m.code, 0, m.stdout + m.stderr);
        t.equal((await raiseGh(e)).code, 0, 'gh raised to write there too');
        watched = [await replica('C', d.file, e)];
      }
      const health = async (r: Replica) => r.call('GET', '/healthz');
      for (const r of watched)
        t.match(
          await health(r),
          { status: 200, json: { ok: true, result: { status: 'ok' } } },
          `${r.name} healthy`,
        );
      pg.stop!('fast');
      for (const r of watched) {
        const down = await until(`${r.name}'s /healthz to say 503`, async () => {
          const h = await health(r);
          return h.status === 503 ? h : undefined;
        });
        t.match(
          down.json,
          { ok: false, error: { code: 'STORE_UNAVAILABLE' } },
          `${r.name}: STORE_UNAVAILABLE`,
        );
        // anyone may ask /healthz: the answer never says where the operator's database is
        const where = new URL(pg.adminUrl);
        t.notOk(
          JSON.stringify(down.json).includes(`:${where.port}`) || 'store' in (down.json.error.details ?? {}),
          `${r.name}: the database location is not in the answer`,
        );
      }
      pg.start!();
      for (const r of watched) {
        await until(`${r.name}'s /healthz to say 200 again`, async () =>
          (await health(r)).status === 200 ? true : undefined,
        );
        t.pass(`${r.name} healthy again`);
        const listed = await r.call('GET', '/v1/approvals?limit=1', TOKENS.alice);
        t.equal(listed.status, 200, `${r.name} reads the store again`);
      }
      // with the database back, a call held on one replica is decided on another and returns
      const holder = watched[0]!;
      const decider = watched.at(-1)!;
      const before = deletes();
      const held = holder.call('POST', '/v1/tools/execute', TOKENS.executor, {
        toolId: 'gh_cli',
        input: { args: ['repo', 'delete', 'acme/app', '--yes'] },
        cliTier: 'write',
      });
      held.catch(() => {}); // awaited below
      const a = await newPending(decider, decided);
      decided.add(a.id);
      const ok = await decider.call('POST', `/v1/approvals/${a.id}/approve`, TOKENS.alice);
      t.equal(ok.status, 200, `approved on ${decider.name}`);
      const r = await held;
      t.match(r, { status: 200, json: { ok: true, result: { exitCode: 0 } } }, JSON.stringify(r.json));
      t.equal(deletes(), before + 1, `${holder.name} sent the DELETE once, after the restart`);
      // a replica of the throwaway cluster goes before its cluster does
      if (pg !== server) for (const r of watched) await r.stop();
    },
  );

  await t.test('every replica stops on SIGTERM, and nothing they started outlives them', async (t) => {
    for (const r of [A, B]) {
      await r.stop();
      t.match(await r.exited, { code: 0 }, `${r.name} stopped`);
    }
    for (const r of live) {
      await r.stop();
      t.same(r.leftovers(), [], `nothing of ${r.name} left running`);
    }
  });
}
