import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import type { ToolHost } from '../../src/host/types.js';
import { startHttpServer } from '../../src/serve/http.js';
import { openSqliteStore } from '../../src/store/sqlite.js';

// MCP sessions are bounded: at most maxMcpSessions at once, and one that stays quiet is ended;
// the review page behind a TLS proxy. A host that runs nothing stands behind the server: only
// the server's own rules are under test.

const host: ToolHost = {
  tools: () => [{ id: 'x:cli:x', name: 'x_cli', description: 'x', inputSchema: { type: 'object' } }],
  runTool: async () => ({
    exitCode: 0,
    stdout: '',
    stderr: '',
    truncated: false,
    runId: 'r',
    cliTier: 'read',
    cliTierReason: 'requested',
  }),
  resume: () => Promise.reject(new Error('unused')),
  approve: () => Promise.reject(new Error('unused')),
  reject: () => Promise.reject(new Error('unused')),
  close: async () => {},
};

t.test('at most maxMcpSessions; a quiet one is ended', async (t) => {
  const store = await openSqliteStore(':memory:');
  const server = await startHttpServer(host, store, {
    port: 0,
    tokens: async () => ({ mcp: 'm', reviewers: [] }),
    approvalTimeoutMs: 1000,
    mcp: { cliTier: 'read', context: 'agent-step' },
    maxMcpSessions: 2,
    mcpIdleMs: 400,
  });
  t.teardown(async () => {
    await server.close();
    await store.close();
  });
  const connect = async () => {
    const c = new Client({ name: 't', version: '0' });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: 'Bearer m' } },
      }),
    );
    return c;
  };
  const a = await connect();
  const b = await connect();
  await t.rejects(connect(), /SERVE_PROTOCOL_ERROR: the server holds 2 MCP sessions/, 'a third is refused');
  t.match(await a.callTool({ name: 'x_cli', arguments: { args: [] } }), {
    structuredContent: { exitCode: 0 },
  });
  await new Promise((r) => setTimeout(r, 1200));
  await t.rejects(a.listTools(), 'a quiet session was ended');
  const c = await connect();
  t.match((await c.listTools()).tools, [{ name: 'x_cli' }], 'room for a new one');
  await Promise.all([a, b, c].map((x) => x.close().catch(() => {})));
});

t.test('behind a TLS proxy: the publicUrl origin signs in, the cookie is Secure', async (t) => {
  const store = await openSqliteStore(':memory:');
  const server = await startHttpServer(host, store, {
    port: 0,
    publicUrl: 'https://review.acme.example',
    tokens: async () => ({ reviewers: [['alice', 'a']] }),
    approvalTimeoutMs: 1000,
    mcp: { cliTier: 'read', context: 'agent-step' },
  });
  t.teardown(async () => {
    await server.close();
    await store.close();
  });
  const login = (origin: string) =>
    fetch(`${server.url}/review/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      body: 'token=a',
    });
  const ok = await login('https://review.acme.example');
  t.equal(ok.status, 303);
  t.match(ok.headers.get('set-cookie'), /; Secure$/);
  t.equal((await login('https://evil.example')).status, 403);
});
