import t from 'tap';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { type Json, serveFixture, TOKENS } from './helpers.js';

// Approvals held inside the call: a destructive request in an agent step waits for a person,
// through the Platform API, with real gh against the mock vendor. Approve → the whole command
// re-runs once; reject → declined; timeout → expired for good; two reviewers → one wins; the
// server stopping → a coded failure and the approval still pending after a restart.

t.setTimeout(300_000);
const DELETE = {
  toolId: 'gh_cli',
  input: { args: ['repo', 'delete', 'acme/app', '--yes'] },
  cliTier: 'write',
};

t.test(
  'approve: the call returns the re-run’s result; two reviewers at once, exactly one wins',
  async (t) => {
    const f = await serveFixture();
    t.teardown(async () => {
      await f.stop();
      await f.d.close();
    });
    const call = f.call('POST', '/v1/tools/execute', TOKENS.executor, DELETE);
    const [a] = await f.pending();
    t.match(a, {
      status: 'pending',
      tool: 'gh_cli',
      args: ['repo', 'delete', 'acme/app', '--yes'],
      request: { method: 'DELETE', path: '/repos/acme/app' },
    });
    t.equal(f.deletes(), 0, 'nothing deleted while it waits');
    const [x, y] = await Promise.all([
      f.call('POST', `/v1/approvals/${a.id}/approve`, TOKENS.alice),
      f.call('POST', `/v1/approvals/${a.id}/reject`, TOKENS.bob),
    ]);
    const statuses = [x.status, y.status].sort();
    t.same(statuses, [200, 409], 'exactly one decision wins');
    const loser = x.status === 409 ? x : y;
    t.equal(loser.json.error.code, 'APPROVAL_NOT_PENDING');
    const winner = x.status === 200 ? 'approve' : 'reject';
    const r = await call;
    if (winner === 'approve') {
      t.equal(r.status, 200, JSON.stringify(r.json));
      t.match(r.json.result, { exitCode: 0, cliTier: 'write' });
      t.equal(f.deletes(), 1, 'the vendor saw the DELETE exactly once');
    } else {
      t.match(r.json.error, { code: 'EXEC_ACTION_CONFIRMATION_DECLINED' });
      t.equal(f.deletes(), 0);
    }
    const again = await f.call('POST', `/v1/approvals/${a.id}/approve`, TOKENS.alice);
    t.match(again, { status: 409, json: { error: { code: 'APPROVAL_NOT_PENDING' } } }, 'decided once');
    const view = await f.call('GET', `/v1/approvals/${a.id}`, TOKENS.executor);
    t.match(view.json.result, { decidedBy: winner === 'approve' ? 'alice' : 'bob', decidedAt: String });

    // the other way round on a second call: approve for sure this time
    const before = f.deletes();
    const second = f.call('POST', '/v1/tools/execute', TOKENS.executor, DELETE);
    const [b] = await f.pending();
    t.equal((await f.call('POST', `/v1/approvals/${b.id}/approve`, TOKENS.bob)).status, 200);
    const out = await second;
    t.match(out.json, { ok: true, result: { exitCode: 0 } }, JSON.stringify(out.json));
    t.equal(f.deletes(), before + 1, 'one DELETE more, exactly');
    const consumed = await f.call('GET', `/v1/approvals/${b.id}`, TOKENS.alice);
    t.equal(consumed.json.result.status, 'consumed', 'the approval was used once');
  },
);

t.test('reject: EXEC_ACTION_CONFIRMATION_DECLINED, nothing sent', async (t) => {
  const f = await serveFixture();
  t.teardown(async () => {
    await f.stop();
    await f.d.close();
  });
  const call = f.call('POST', '/v1/tools/execute', TOKENS.executor, DELETE);
  const [a] = await f.pending();
  t.equal((await f.call('POST', `/v1/approvals/${a.id}/reject`, TOKENS.alice)).status, 200);
  const r = await call;
  t.equal(r.status, 422);
  t.match(r.json.error, {
    code: 'EXEC_ACTION_CONFIRMATION_DECLINED',
    details: { approvalId: a.id, decidedBy: 'alice' },
  });
  t.equal(f.deletes(), 0);
});

t.test('timeout: SERVE_APPROVAL_TIMEOUT; the approval expired and can never be approved', async (t) => {
  const f = await serveFixture({ approvalTimeoutMs: 1500 });
  t.teardown(async () => {
    await f.stop();
    await f.d.close();
  });
  const r = await f.call('POST', '/v1/tools/execute', TOKENS.executor, DELETE);
  t.match(
    r.json.error,
    { code: 'SERVE_APPROVAL_TIMEOUT', details: { approvalId: String } },
    JSON.stringify(r.json),
  );
  const id = r.json.error.details.approvalId;
  const view = await f.call('GET', `/v1/approvals/${id}`, TOKENS.alice);
  t.equal(view.json.result.status, 'expired');
  const late = await f.call('POST', `/v1/approvals/${id}/approve`, TOKENS.alice);
  t.match(late, { status: 409, json: { error: { code: 'APPROVAL_NOT_PENDING' } } });
  t.equal(f.deletes(), 0);
  const audit = await f.call('GET', `/v1/audit?runId=${view.json.result.runId}`, TOKENS.alice);
  t.ok(
    audit.json.result.events.some((e: Json) => e.event.code === 'SERVE_APPROVAL_TIMEOUT'),
    'the expiry is audited',
  );
});

t.test('the server stops while a call waits: SERVE_STOPPED; the approval survives the restart', async (t) => {
  const f = await serveFixture();
  const call = f.call('POST', '/v1/tools/execute', TOKENS.executor, DELETE);
  const [a] = await f.pending();
  const stopping = f.stop();
  const r = await call;
  t.match(r, { status: 503, json: { error: { code: 'SERVE_STOPPED', details: { approvalId: a.id } } } });
  await stopping;
  const g = await f.restart();
  t.teardown(async () => {
    await g.stop();
    await f.d.close();
  });
  const again = await g.call('GET', `/v1/approvals/${a.id}`, TOKENS.alice);
  t.equal(again.json.result.status, 'pending', 'still pending in the store');
  t.equal(g.deletes(), 0);

  // nobody waits for it now: approved, it is resumed through the API, once
  const early = await g.call('POST', `/v1/approvals/${a.id}/resume`, TOKENS.executor);
  t.match(early, {
    status: 409,
    json: { error: { code: 'APPROVAL_NOT_PENDING', details: { status: 'pending' } } },
  });
  t.equal(g.deletes(), 0, 'a pending approval resumes nothing');
  const byReviewer = await g.call('POST', `/v1/approvals/${a.id}/resume`, TOKENS.alice);
  t.equal(byReviewer.json.error.code, 'SERVE_FORBIDDEN', 'a reviewer decides; the executor resumes');
  await g.call('POST', `/v1/approvals/${a.id}/approve`, TOKENS.alice);
  const resumed = await g.call('POST', `/v1/approvals/${a.id}/resume`, TOKENS.executor);
  t.equal(resumed.status, 200, JSON.stringify(resumed.json));
  t.match(resumed.json.result, { exitCode: 0, cliTier: 'write' }, "the re-run's output");
  t.equal(g.deletes(), 1, 'the vendor saw the DELETE once');
  const twice = await g.call('POST', `/v1/approvals/${a.id}/resume`, TOKENS.executor);
  t.match(twice, {
    status: 409,
    json: { error: { code: 'APPROVAL_NOT_PENDING', details: { status: 'consumed' } } },
  });
  t.equal(g.deletes(), 1, 'a consumed approval resumes nothing');
});

t.test('the API client going away withdraws its approval', async (t) => {
  const f = await serveFixture();
  t.teardown(async () => {
    await f.stop();
    await f.d.close();
  });
  const ac = new AbortController();
  const call = fetch(`${f.url}/v1/tools/execute`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKENS.executor}`, 'content-type': 'application/json' },
    body: JSON.stringify(DELETE),
    signal: ac.signal,
  });
  const [a] = await f.pending();
  ac.abort();
  await t.rejects(call);
  let status = '';
  for (let i = 0; i < 50 && status !== 'withdrawn'; i++) {
    status = (await f.call('GET', `/v1/approvals/${a.id}`, TOKENS.alice)).json.result.status;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.equal(status, 'withdrawn');
  t.match(await f.call('POST', `/v1/approvals/${a.id}/approve`, TOKENS.alice), {
    status: 409,
    json: { error: { code: 'APPROVAL_NOT_PENDING' } },
  });
  t.equal(f.deletes(), 0);
});

t.test('a token that cannot be read: fail closed, its location not shown', async (t) => {
  const f = await serveFixture();
  t.teardown(async () => {
    await f.stop();
    await f.d.close();
  });
  const { chmodSync } = await import('node:fs');
  const { join } = await import('node:path');
  chmodSync(join(f.d.dir.dir, 'executor.secret'), 0o644);
  const r = await f.call('GET', '/v1/tools', TOKENS.executor);
  t.equal(r.status, 503);
  t.equal(r.json.error.code, 'CONFIG_SECRET_UNAVAILABLE');
  t.notOk(JSON.stringify(r.json).includes('executor.secret'), 'the file is not named');
  t.same(
    (await f.call('GET', '/healthz')).json,
    { ok: true, result: { status: 'ok', store: 'ok' } },
    'health still answers',
  );
});

t.test('a destructive GraphQL mutation: the approval names its operation', async (t) => {
  // the operator's manifest declares addStar destructive at the GHE GraphQL endpoint; the
  // approval records the operation's name (StarIt), as the gate does for every GraphQL request
  const f = await serveFixture({
    over: (c) => {
      const gh = c.extensions['github']!;
      const file = gh.manifest as string;
      const m = JSON.parse(readFileSync(file, 'utf8'));
      m.clis[0].wirePolicy = {
        overrides: [
          { match: { pathPattern: '/api/graphql', graphqlOperation: 'addStar' }, wireClass: 'destructive' },
        ],
      };
      writeFileSync(file, JSON.stringify(m));
      const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
      return { ...c, extensions: { ...c.extensions, github: { ...gh, sha256 } } };
    },
  });
  t.teardown(async () => {
    await f.stop();
    await f.d.close();
  });
  const call = f.call('POST', '/v1/tools/execute', TOKENS.executor, {
    toolId: 'gh_cli',
    input: {
      args: [
        'api',
        'graphql',
        '-f',
        'query=mutation StarIt { addStar(input: {starrableId: "R_1"}) { clientMutationId } }',
      ],
    },
    cliTier: 'write',
  });
  const [a] = await f.pending();
  t.match(a.request, { method: 'POST', path: '/api/graphql', graphqlOperation: 'StarIt' });
  const stars = () => f.d.vendor.log.filter((r) => r.body.toString().includes('addStar')).length;
  t.equal(stars(), 0, 'not sent while it waits');
  const login = await fetch(`${f.url}/review/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: f.url },
    body: `token=${TOKENS.alice}`,
  });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const html = await (await fetch(`${f.url}/review`, { headers: { cookie } })).text();
  t.match(html, /GraphQL operation: <code class="operation">StarIt<\/code>/, 'the page names the operation');
  await f.call('POST', `/v1/approvals/${a.id}/approve`, TOKENS.alice);
  t.match((await call).json, { ok: true, result: { exitCode: 0 } });
  t.equal(stars(), 1, 'sent once');
});

t.test(
  'two servers over one store: the one without the call sees it waiting, and resumes nothing while it does',
  async (t) => {
    const a = await serveFixture();
    const b = await a.replica();
    t.teardown(async () => {
      await b.stop();
      await a.stop();
      await a.d.close();
    });
    const call = a.call('POST', '/v1/tools/execute', TOKENS.executor, DELETE);
    const [p] = await b.pending();
    const seen = await b.call('GET', `/v1/approvals/${p.id}`, TOKENS.alice);
    t.equal(seen.json.result.waiting, true, 'the other server knows a call waits for it');
    const page = await fetch(`${b.url}/review/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: b.url },
      body: `token=${TOKENS.alice}`,
    });
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0]!;
    const html = await (await fetch(`${b.url}/review`, { headers: { cookie } })).text();
    t.match(html, /class="wait held"/, "the other server's page shows the wait and its countdown");
    t.notMatch(html, /No call is waiting/);
    await b.call('POST', `/v1/approvals/${p.id}/approve`, TOKENS.alice);
    const r = await call;
    t.equal(r.status, 200, JSON.stringify(r.json));
    t.equal(a.deletes(), 1, 'the waiting call ran it, once');
    const again = await b.call('POST', `/v1/approvals/${p.id}/resume`, TOKENS.executor);
    t.equal(again.json.error.code, 'APPROVAL_NOT_PENDING', 'consumed by the call that waited');

    // a second call waits on A; while it does, B resumes nothing, even once it is approved
    const second = a.call('POST', '/v1/tools/execute', TOKENS.executor, DELETE);
    const [q] = await b.pending();
    const held = await b.call('POST', `/v1/approvals/${q.id}/resume`, TOKENS.executor);
    t.match(held, {
      status: 409,
      json: { error: { code: 'SERVE_APPROVAL_HELD', details: { approvalId: q.id } } },
    });
    // A stops: its call answers SERVE_STOPPED and its hold ends at once
    const stopping = a.stop();
    t.equal((await second).json.error.code, 'SERVE_STOPPED');
    await stopping;
    const after = await b.call('GET', `/v1/approvals/${q.id}`, TOKENS.alice);
    t.equal(after.json.result.status, 'pending');
    t.equal(after.json.result.waiting, undefined, 'no call waits any more');
    await b.call('POST', `/v1/approvals/${q.id}/approve`, TOKENS.alice);
    const resumed = await b.call('POST', `/v1/approvals/${q.id}/resume`, TOKENS.executor);
    t.equal(resumed.status, 200, JSON.stringify(resumed.json));
    t.equal(b.deletes(), 2, 'each DELETE reached the vendor once');
  },
);
