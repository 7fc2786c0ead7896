import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { request } from 'node:http';
import t from 'tap';
import { type Json, serveFixture, TOKENS } from './helpers.js';

// MCP Streamable HTTP at /mcp through the SDK's own client: the tools, a call, a call held for
// a person with its progress notifications, 20 concurrent calls, and the coded refusals of
// the endpoint itself (a wrong token, malformed JSON, something that is not JSON-RPC).

t.setTimeout(300_000);
const f = await serveFixture();
t.teardown(async () => {
  await f.stop();
  await f.d.close();
});

async function connect(token: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'clibroker-test', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${f.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } },
  });
  await client.connect(transport);
  return client;
}

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '0' } },
});

/** An initialize with the MCP token and these headers (node:http, so the Host header is ours to set). */
function initialize(headers: Record<string, string>): Promise<{ status: number; json: Json }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${f.url}/mcp`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TOKENS.mcp}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        let body = '';
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => {
          // an accepted initialize may answer as an event stream: its first data line is the message
          const text = body.startsWith('{') ? body : (/^data: (.*)$/m.exec(body)?.[1] ?? '{}');
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) });
        });
      },
    );
    req.on('error', reject);
    req.end(INIT);
  });
}

t.test('tools/list and tools/call', async (t) => {
  const client = await connect(TOKENS.mcp);
  t.teardown(() => client.close());
  const { tools } = await client.listTools();
  t.same(
    tools.map((x) => x.name),
    ['gh_cli', 'curl_cli', 'az_cli'],
  );
  t.match(tools[0]!.inputSchema, { type: 'object', required: ['args'] });
  const r = await client.callTool({ name: 'gh_cli', arguments: { args: ['api', 'user'] } });
  t.notOk(r.isError, JSON.stringify(r));
  t.match(r.structuredContent, { exitCode: 0, cliTier: 'write' }, 'serve.cliTier: write requested');
  const bad = await client.callTool({ name: 'nope_cli', arguments: { args: [] } });
  t.match(bad.structuredContent, { error: { code: 'TOOL_VENDOR_CLI_NOT_OFFERED' } });
});

t.test('a held call: progress names the approval and the review URL; approve → the re-run', async (t) => {
  const client = await connect(TOKENS.mcp);
  t.teardown(() => client.close());
  const progress: string[] = [];
  const before = f.deletes();
  const call = client.callTool(
    { name: 'gh_cli', arguments: { args: ['repo', 'delete', 'acme/app', '--yes'] } },
    undefined,
    { onprogress: (p) => progress.push(String(p.message)), timeout: 120_000 },
  );
  const [a] = await f.pending();
  const waiting = () => progress.find((m) => m.startsWith('waiting for a person'));
  for (let i = 0; i < 50 && !waiting(); i++) await new Promise((r) => setTimeout(r, 100));
  t.match(
    waiting(),
    new RegExp(`waiting for a person.*DELETE .*/repos/acme/app.*approval ${a.id}.*${f.url}/review#${a.id}`),
  );
  t.equal((await f.call('POST', `/v1/approvals/${a.id}/approve`, TOKENS.alice)).status, 200);
  const r = await call;
  t.notOk(r.isError, JSON.stringify(r));
  t.match(r.structuredContent, { exitCode: 0 });
  t.equal(f.deletes(), before + 1, 'the vendor saw the DELETE once');
});

t.test('a cancelled wait withdraws the approval and is audited', async (t) => {
  const client = await connect(TOKENS.mcp);
  t.teardown(() => client.close());
  const ac = new AbortController();
  const call = client.callTool(
    { name: 'gh_cli', arguments: { args: ['repo', 'delete', 'acme/app', '--yes'] } },
    undefined,
    { signal: ac.signal },
  );
  const [a] = await f.pending();
  ac.abort();
  await t.rejects(call, 'the client sees its own cancellation');
  let status = '';
  for (let i = 0; i < 50 && status !== 'withdrawn'; i++) {
    status = (await f.call('GET', `/v1/approvals/${a.id}`, TOKENS.alice)).json.result.status;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.equal(status, 'withdrawn', 'nobody can approve a call nobody waits for');
  const audit = await f.call('GET', `/v1/audit?runId=${a.runId}`, TOKENS.alice);
  t.ok(
    audit.json.result.events.some((e: Json) => e.event.code === 'SERVE_CALL_CANCELLED'),
    'audited',
  );
});

t.test('a cancelled run: its process group is killed, the call is audited', async (t) => {
  const client = await connect(TOKENS.mcp);
  t.teardown(() => client.close());
  const bitbucket = () => f.d.vendor.log.filter((r) => r.host === 'api.bitbucket.org').length;
  const ac = new AbortController();
  const progress: string[] = [];
  // curl retrying a 404 once a second: a run that lasts a minute unless it is killed
  const call = client.callTool(
    {
      name: 'curl_cli',
      arguments: {
        args: [
          '-sf',
          '--retry',
          '60',
          '--retry-delay',
          '1',
          '--retry-all-errors',
          'https://api.bitbucket.org/2.0/nope',
        ],
      },
    },
    undefined,
    { signal: ac.signal, timeout: 120_000, onprogress: (p) => progress.push(String(p.message)) },
  );
  for (let i = 0; i < 100 && (bitbucket() < 2 || progress.length === 0); i++)
    await new Promise((r) => setTimeout(r, 100));
  t.ok(bitbucket() >= 2, 'the CLI is running and retrying');
  t.match(progress[0], /^running curl_cli \(\d+ s\)$/, 'a long run sends progress');
  ac.abort();
  await t.rejects(call);
  let events: Json[] = [];
  for (let i = 0; i < 100; i++) {
    const r = await f.call(
      'GET',
      '/v1/audit?type=extension.execution.failed&order=newest&limit=5',
      TOKENS.alice,
    );
    events = r.json.result.events;
    if (
      events.some((e: Json) => e.event.code === 'SERVE_CALL_CANCELLED' && e.event.extensionId === 'atlassian')
    )
      break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const ev = events.find(
    (e: Json) => e.event.code === 'SERVE_CALL_CANCELLED' && e.event.extensionId === 'atlassian',
  );
  t.ok(ev, 'the cancellation is audited');
  t.ok(
    events.some((e: Json) => e.event.runId === ev?.event.runId && e.event.signal === 'SIGKILL'),
    "the run's own event says its CLI was killed",
  );
  const after = bitbucket();
  await new Promise((r) => setTimeout(r, 2500));
  t.equal(bitbucket(), after, 'nothing more was sent: the process group is gone');
});

t.test('20 concurrent calls from one client, each its own run', async (t) => {
  const client = await connect(TOKENS.mcp);
  t.teardown(() => client.close());
  const rs = await Promise.all(
    Array.from({ length: 20 }, () =>
      client.callTool({ name: 'gh_cli', arguments: { args: ['api', 'user'] } }),
    ),
  );
  t.equal(rs.filter((r) => !r.isError && (r.structuredContent as Json).exitCode === 0).length, 20);
  t.equal(new Set(rs.map((r) => (r.structuredContent as Json).runId)).size, 20, 'twenty runs');
});

t.test('the endpoint’s own refusals are JSON-RPC errors with the catalogue code', async (t) => {
  const post = async (token: string | undefined, body: string) => {
    const r = await fetch(`${f.url}/mcp`, {
      method: 'POST',
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body,
    });
    return { status: r.status, json: (await r.json()) as Json };
  };
  const init = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '0' } },
  });
  t.match(await post(undefined, init), {
    status: 401,
    json: { error: { data: { code: 'SERVE_UNAUTHORIZED' } } },
  });
  t.match(await post('wrong', init), {
    status: 401,
    json: { error: { data: { code: 'SERVE_UNAUTHORIZED' } } },
  });
  t.match(await post(TOKENS.alice, init), {
    status: 403,
    json: { error: { data: { code: 'SERVE_FORBIDDEN' } } },
  });
  t.match(await post(TOKENS.mcp, '{"jsonrpc": '), {
    status: 400,
    json: { error: { code: -32700, data: { code: 'SERVE_PROTOCOL_ERROR' } } },
  });
  t.match(await post(TOKENS.mcp, '{"hello": "world"}'), {
    status: 400,
    json: { error: { code: -32600, data: { code: 'SERVE_PROTOCOL_ERROR' } } },
  });
  t.match(
    await post(TOKENS.mcp, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })),
    {
      status: 400,
      json: { error: { data: { code: 'SERVE_PROTOCOL_ERROR' } } },
    },
    'no session: initialize first',
  );
});

t.test('DNS rebinding: an Origin or a Host that is not this server’s is refused', async (t) => {
  const port = new URL(f.url).port;
  const rebind = `http://rebind.example:${port}`;
  // the SDK's client from a page of another origin: refused before any session exists
  await t.rejects(connect(TOKENS.mcp, { origin: rebind }), 'the SDK client cannot initialize');
  t.match(
    await initialize({ origin: rebind }),
    {
      status: 403,
      json: { jsonrpc: '2.0', error: { code: -32001, data: { code: 'SERVE_FORBIDDEN' } } },
    },
    'a valid token does not make another origin this server’s',
  );
  for (const origin of ['null', `http://127.0.0.1:${Number(port) + 1}`, `https://127.0.0.1:${port}`])
    t.match(
      await initialize({ origin }),
      { status: 403, json: { error: { data: { code: 'SERVE_FORBIDDEN' } } } },
      `Origin ${origin} refused`,
    );
  t.match(await initialize({ origin: `http://localhost:${port}` }), {
    status: 200,
    json: { result: { serverInfo: { name: 'clibroker' } } },
  });

  // the server's own origin, and no Origin at all (a client that is not a browser), are served
  const own = await connect(TOKENS.mcp, { origin: f.url });
  t.teardown(() => own.close());
  t.same(
    (await own.listTools()).tools.map((x) => x.name),
    ['gh_cli', 'curl_cli', 'az_cli'],
  );
  const none = await connect(TOKENS.mcp);
  t.teardown(() => none.close());
  t.equal((await none.listTools()).tools.length, 3);

  // a Host naming another server: what a rebinding page's requests carry, whatever its Origin
  t.match(
    await initialize({ host: `rebind.example:${port}` }),
    {
      status: 421,
      json: { jsonrpc: '2.0', error: { code: -32000, data: { code: 'SERVE_PROTOCOL_ERROR' } } },
    },
    'a foreign Host is refused',
  );
  t.match(await initialize({ host: `127.0.0.1:${Number(port) + 1}` }), { status: 421 }, 'another port');
  for (const host of [`localhost:${port}`, `[::1]:${port}`])
    t.match(
      await initialize({ host }),
      { status: 200, json: { result: { serverInfo: { name: 'clibroker' } } } },
      `bound to loopback, ${host} is this server`,
    );
});

t.test('the server stopping answers a waiting MCP call with SERVE_STOPPED', async (t) => {
  const client = await connect(TOKENS.mcp);
  const call = client.callTool(
    { name: 'gh_cli', arguments: { args: ['repo', 'delete', 'acme/app', '--yes'] } },
    undefined,
    { timeout: 120_000 },
  );
  const [a] = await f.pending();
  const before = f.deletes();
  await Promise.all([
    f.stop(),
    call.then((r) => {
      t.equal(r.isError, true);
      t.match(r.structuredContent, { error: { code: 'SERVE_STOPPED', details: { approvalId: a.id } } });
    }),
  ]);
  t.equal(f.deletes(), before, 'nothing sent');
  await client.close().catch(() => {});
});
