import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import t from 'tap';
import { OPENAPI } from '../../src/serve/openapi.js';
import { SEED_SECRETS } from '../helpers/seed.js';
import { type Json, serveFixture, TOKENS } from './helpers.js';

// The Platform API of `clibroker serve`: a real HTTP server on 127.0.0.1, real gh against the
// mock vendor, tokens read from 0600 files. Every role, every refusal is a coded answer.

t.setTimeout(300_000);
const f = await serveFixture();
t.teardown(async () => {
  await f.stop();
  await f.d.close();
});
const seen: string[] = [];
const call = async (...a: Parameters<typeof f.call>) => {
  const r = await f.call(...a);
  seen.push(JSON.stringify(r.json));
  return r;
};

t.test('no token needed: /healthz and /openapi.json (the shipped document)', async (t) => {
  t.same(await call('GET', '/healthz'), {
    status: 200,
    json: { ok: true, result: { status: 'ok', store: 'ok' } },
  });
  const doc = await call('GET', '/openapi.json');
  t.equal(doc.status, 200);
  t.same(doc.json, JSON.parse(JSON.stringify(OPENAPI)));
  const shipped = JSON.parse(readFileSync(new URL('../../schemas/openapi.json', import.meta.url), 'utf8'));
  t.same(shipped, doc.json, 'schemas/openapi.json is the served document (npm run docs:openapi)');
  for (const p of [
    '/v1/tools',
    '/v1/tools/execute',
    '/v1/approvals',
    '/v1/approvals/{id}/approve',
    '/v1/audit',
  ])
    t.ok(p in doc.json.paths, p);
});

/** A request whose headers are all ours, Host included (fetch sets its own Host). */
function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; json: Json }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${f.url}${path}`,
      {
        method,
        headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => {
          let json: Json;
          try {
            json = JSON.parse(text);
          } catch {
            json = { text };
          }
          seen.push(text);
          resolve({ status: res.statusCode ?? 0, json });
        });
      },
    );
    req.on('error', reject);
    req.end(body !== undefined ? JSON.stringify(body) : undefined);
  });
}

t.test('every route answers only to its own names: a foreign Host or Origin is refused', async (t) => {
  const port = new URL(f.url).port;
  const executor = { authorization: `Bearer ${TOKENS.executor}` };
  const before = f.d.vendor.log.length;
  const run = { toolId: 'gh_cli', input: { args: ['api', 'user'] } };
  for (const [path, method, headers, body] of [
    ['/healthz', 'GET', {}, undefined],
    ['/openapi.json', 'GET', {}, undefined],
    ['/v1/tools', 'GET', executor, undefined],
    ['/v1/tools/execute', 'POST', executor, run],
    ['/review', 'GET', {}, undefined],
  ] as const) {
    const r = await raw(method, path, { ...headers, host: `rebind.example:${port}` }, body);
    t.equal(r.status, 421, `${path}: a Host naming another server`);
    t.match(r.json, { ok: false, error: { code: 'SERVE_PROTOCOL_ERROR', details: { host: /rebind/ } } });
  }
  t.equal(
    (await raw('GET', '/healthz', { host: `127.0.0.1:${Number(port) + 1}` })).status,
    421,
    'another port',
  );
  t.equal((await raw('GET', '/healthz', { host: '127.0.0.1' })).status, 421, 'no port is port 80');
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LocalHost:${port}`, `[::1]:${port}`])
    t.equal(
      (await raw('GET', '/healthz', { host })).status,
      200,
      `bound to loopback, ${host} is this server`,
    );

  const rebind = await raw(
    'POST',
    '/v1/tools/execute',
    { ...executor, origin: `http://rebind.example:${port}` },
    run,
  );
  t.equal(rebind.status, 403, 'a page of another origin cannot run tools, even with the token');
  t.match(rebind.json, {
    error: { code: 'SERVE_FORBIDDEN', details: { origin: `http://rebind.example:${port}` } },
  });
  t.equal(
    (await raw('GET', '/v1/tools', { ...executor, origin: `http://localhost:${Number(port) + 1}` })).status,
    403,
    'another port is another origin',
  );
  t.equal(f.d.vendor.log.length, before, 'nothing ran');
  for (const origin of [f.url, `http://localhost:${port}`])
    t.equal((await raw('GET', '/v1/tools', { ...executor, origin })).status, 200, `Origin ${origin}`);
});

t.test('tokens: each role its own, compared whole', async (t) => {
  const cases: [string, string, string, string | undefined, unknown, number, string][] = [
    ['no token', 'GET', '/v1/tools', undefined, undefined, 401, 'SERVE_UNAUTHORIZED'],
    ['a wrong token', 'GET', '/v1/tools', 'nope', undefined, 401, 'SERVE_UNAUTHORIZED'],
    [
      'a prefix of the token',
      'GET',
      '/v1/tools',
      TOKENS.executor.slice(0, -1),
      undefined,
      401,
      'SERVE_UNAUTHORIZED',
    ],
    ['the MCP token on the API', 'GET', '/v1/tools', TOKENS.mcp, undefined, 403, 'SERVE_FORBIDDEN'],
    [
      'a reviewer cannot run tools',
      'POST',
      '/v1/tools/execute',
      TOKENS.alice,
      { toolId: 'gh_cli', input: { args: ['api', 'user'] } },
      403,
      'SERVE_FORBIDDEN',
    ],
    [
      'the executor cannot decide',
      'POST',
      '/v1/approvals/x/approve',
      TOKENS.executor,
      undefined,
      403,
      'SERVE_FORBIDDEN',
    ],
    [
      'the MCP endpoint wants its own token',
      'POST',
      '/mcp',
      TOKENS.executor,
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      403,
      'SERVE_FORBIDDEN',
    ],
  ];
  const before = f.d.vendor.log.length;
  for (const [name, method, path, token, body, status, code] of cases) {
    const r = await call(method, path, token, body);
    t.equal(r.status, status, name);
    t.equal(r.json.error?.data?.code ?? r.json.error?.code, code, name);
  }
  t.equal(f.d.vendor.log.length, before, 'nothing ran');
  const ok = await call('GET', '/v1/tools', TOKENS.executor);
  t.same(
    ok.json.result.tools.map((x: { name: string }) => x.name),
    ['gh_cli', 'curl_cli', 'az_cli'],
  );
  t.equal((await call('GET', '/v1/tools', TOKENS.bob)).status, 200, 'a reviewer may list');
});

t.test('POST /v1/tools/execute runs the tool; cliTier and context are the platform’s', async (t) => {
  const r = await call('POST', '/v1/tools/execute', TOKENS.executor, {
    toolId: 'gh_cli',
    input: { args: ['api', 'user'] },
  });
  t.equal(r.status, 200, JSON.stringify(r.json));
  t.match(r.json.result, { exitCode: 0, cliTier: 'read', runId: String });
  t.match(JSON.parse(r.json.result.stdout), { login: 'octocat' });
  const audit = await call('GET', `/v1/audit?runId=${r.json.result.runId}`, TOKENS.alice);
  t.equal(audit.status, 200);
  t.ok(
    audit.json.result.events.some((e: Json) => e.event.type === 'extension.execution.succeeded'),
    'the run is in the audit trail',
  );
  const page = await call('GET', '/v1/audit?limit=1&order=oldest', TOKENS.alice);
  t.equal(page.json.result.events.length, 1);
  const next = await call(
    'GET',
    `/v1/audit?limit=1&order=oldest&after=${page.json.result.next}`,
    TOKENS.alice,
  );
  t.ok(next.json.result.events[0].seq > page.json.result.events[0].seq, 'paged forward');

  const write = await call('POST', '/v1/tools/execute', TOKENS.executor, {
    toolId: 'gh_cli',
    input: { args: ['api', '-X', 'POST', 'repos/acme/app/issues', '-f', 'title=x'] },
    cliTier: 'read',
  });
  t.equal(write.status, 422);
  t.match(write.json.error, { code: 'POLICY_BLOCKED', details: { policyCode: 'CLI_REQUEST_TIER_DENIED' } });
  t.match(
    write.json.error.message,
    /read is the tier asked for this call; the platform that makes the call chooses it/,
  );

  const api = await call('POST', '/v1/tools/execute', TOKENS.executor, {
    toolId: 'gh_cli',
    input: { args: ['repo', 'delete', 'acme/app', '--yes'] },
    cliTier: 'write',
    context: 'api',
  });
  t.match(api.json.error, { code: 'CLI_CONFIRMATION_REQUIRED' }, 'outside an agent step nothing waits');
  t.equal(api.json.error.details.policyCode, undefined, 'the rule is the failure code itself');
  t.equal(f.deletes(), 0);
});

t.test('bad input: each a coded error, nothing runs', async (t) => {
  const before = f.d.vendor.log.length;
  const big = 'x'.repeat(1024 * 1024 + 1);
  const cases: [string, unknown, number, string][] = [
    ['malformed JSON', '{"toolId": "gh_cli", ', 400, 'SERVE_PROTOCOL_ERROR'],
    ['not an object', '[1,2]', 400, 'SERVE_PROTOCOL_ERROR'],
    [
      'an unknown body field',
      { toolId: 'gh_cli', input: { args: [] }, env: {} },
      400,
      'SERVE_PROTOCOL_ERROR',
    ],
    ['no input', { toolId: 'gh_cli' }, 400, 'SERVE_PROTOCOL_ERROR'],
    ['an unknown tool', { toolId: 'kubectl_cli', input: { args: [] } }, 404, 'TOOL_VENDOR_CLI_NOT_OFFERED'],
    [
      'the agent names a tier',
      { toolId: 'gh_cli', input: { args: ['api', 'user'], cliTier: 'write' } },
      400,
      'INVALID_TOOL_INPUT',
    ],
    [
      'oversized stdin',
      { toolId: 'gh_cli', input: { args: ['api', 'user'], stdin: big } },
      400,
      'INVALID_TOOL_INPUT',
    ],
    ['too many args', { toolId: 'gh_cli', input: { args: Array(257).fill('x') } }, 400, 'INVALID_TOOL_INPUT'],
    [
      'an arg over 32 KiB',
      { toolId: 'gh_cli', input: { args: ['x'.repeat(32 * 1024 + 1)] } },
      400,
      'INVALID_TOOL_INPUT',
    ],
    [
      'a tier that is not one',
      { toolId: 'gh_cli', input: { args: [] }, cliTier: 'root' },
      400,
      'INVALID_TOOL_INPUT',
    ],
  ];
  for (const [name, body, status, code] of cases) {
    const r = await call('POST', '/v1/tools/execute', TOKENS.executor, body);
    t.equal(r.status, status, name);
    t.equal(r.json.error?.code, code, `${name}: ${r.json.error?.message}`);
  }
  const huge = await fetch(`${f.url}/v1/tools/execute`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKENS.executor}`, 'content-type': 'application/json' },
    body: 'x'.repeat(60 * 1024 * 1024),
  }).then(
    async (r) => ({ status: r.status, json: (await r.json()) as Json }),
    (e: Error) => ({ status: 0, json: { error: { code: e.message } } as Json }),
  );
  t.equal(huge.status, 413, 'a body over the cap');
  t.equal(huge.json.error.code, 'SERVE_PROTOCOL_ERROR');
  t.match(await call('GET', '/v1/nothing', TOKENS.executor), {
    status: 404,
    json: { error: { code: 'SERVE_PROTOCOL_ERROR' } },
  });
  t.match(await call('DELETE', '/v1/tools', TOKENS.executor), {
    status: 405,
    json: { error: { code: 'SERVE_PROTOCOL_ERROR' } },
  });
  t.match(await call('GET', '/v1/approvals/nope', TOKENS.alice), {
    status: 404,
    json: { error: { code: 'APPROVAL_NOT_FOUND' } },
  });
  t.match(await call('GET', '/v1/approvals/a%20b', TOKENS.alice), {
    status: 400,
    json: { error: { code: 'SERVE_PROTOCOL_ERROR' } },
  });
  t.match(await call('POST', '/v1/approvals/nope/approve', TOKENS.alice), {
    status: 404,
    json: { error: { code: 'APPROVAL_NOT_FOUND' } },
  });
  t.match(await call('GET', '/v1/audit?limit=0', TOKENS.alice), {
    status: 400,
    json: { error: { code: 'SERVE_PROTOCOL_ERROR' } },
  });
  t.match(await call('GET', '/v1/audit?bogus=1', TOKENS.alice), {
    status: 400,
    json: { error: { code: 'SERVE_PROTOCOL_ERROR' } },
  });
  t.equal(f.d.vendor.log.length, before, 'nothing reached the vendor');
});

t.test('no secret in any answer', async (t) => {
  for (const s of [...SEED_SECRETS, ...Object.values(TOKENS)])
    t.notOk(
      seen.some((x) => x.includes(s)),
      'not in an answer',
    );
});

t.test("/healthz says 503 with the store's code once the store cannot answer", async (t) => {
  // a second server over a store of its own, closed under it: a load balancer stops sending it calls
  const g = await serveFixture();
  t.teardown(async () => {
    await g.stop();
    await g.d.close();
  });
  t.equal((await g.call('GET', '/healthz')).status, 200);
  await g.host.store.close();
  const r = await g.call('GET', '/healthz');
  t.equal(r.status, 503);
  t.match(r.json, { ok: false, error: { code: 'STORE_CLOSED' } });
});
