/**
 * The HTTP server's steps, each entered alone: whether a request names this server, how the
 * /mcp door refuses a request no session can take, the progress a long MCP call sends, and
 * which paused calls the hold waits for and the event it writes when one ends there.
 */
import type { IncomingMessage } from 'node:http';
import t from 'tap';
import type { ToolHost, ToolOutput } from '../../src/host/types.js';
import { BrokerError } from '../../src/errors.js';
import { type Holder, heldEndEvent, heldPause } from '../../src/serve/hold.js';
import { foreign, ownNames } from '../../src/serve/http.js';
import { heldCall, McpSessions, mcpSdk, RpcRefusal } from '../../src/serve/mcp-door.js';

const req = (headers: Record<string, string>, method = 'POST') =>
  ({ headers, method }) as unknown as IncomingMessage;

t.test('a request names this server by its Host, and a page by its Origin', (t) => {
  const names = ownNames({ address: '127.0.0.1', port: 8787 });
  const cases: Record<string, [Record<string, string>, number | string | undefined]> = {
    'its own Host': [{ host: '127.0.0.1:8787' }, undefined],
    'its own Host and Origin': [{ host: 'localhost:8787', origin: 'http://localhost:8787' }, undefined],
    'no Host': [{}, 421],
    'another name (a rebinding page)': [{ host: 'rebind.example:8787' }, 421],
    'a page of another origin': [
      { host: '127.0.0.1:8787', origin: 'http://evil.example' },
      'SERVE_FORBIDDEN',
    ],
  };
  t.plan(Object.keys(cases).length);
  for (const [name, [headers, want]] of Object.entries(cases)) {
    const r = foreign(names, undefined, req(headers));
    if (want === undefined) t.equal(r, undefined, name);
    else if (typeof want === 'number') t.match(r, { httpStatus: want, code: 'SERVE_PROTOCOL_ERROR' }, name);
    else t.match(r, { code: want }, name);
  }
});

t.test('the /mcp door: a request no session can take is refused as JSON-RPC', async (t) => {
  const sdk = await mcpSdk();
  const host = { tools: () => [] } as unknown as ToolHost;
  const sessions = (max: number) => {
    const s = new McpSessions(sdk, {
      host,
      call: { cliTier: 'read', context: 'agent-step', tierSource: 'serve.cliTier' },
      max,
      idleMs: 60_000,
      progressEvery: 1_000,
      holder: () => ({}) as Holder,
    });
    t.teardown(() => s.close());
    return s;
  };
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  };
  const cases: Record<string, [IncomingMessage, unknown, number, number]> = {
    'a session this server does not hold': [req({ 'mcp-session-id': 'gone' }), init, 404, 1],
    'no session id, and no initialize': [req({}), { jsonrpc: '2.0', id: 1, method: 'tools/list' }, 400, 1],
    'no session id on a GET': [req({}, 'GET'), undefined, 400, 1],
    'an initialize past the bound': [req({}), init, 503, 0],
  };
  t.plan(Object.keys(cases).length * 2 + 1);
  for (const [name, [r, body, status, max]] of Object.entries(cases)) {
    const e = await sessions(max)
      .for(r, body)
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    t.ok(e instanceof RpcRefusal, `${name}: refused`);
    t.match(e, { status, rpcCode: -32000 }, `${name}: ${status}`);
  }
  const s = sessions(1);
  const transport = await s.for(req({}), init);
  t.ok(transport, 'an initialize within the bound opens a session');
});

t.test('a long MCP call says what it is doing: running, then waiting for a person', async (t) => {
  const said: string[] = [];
  let release!: (o: ToolOutput) => void;
  const holder = {
    run: (_tool: string, _input: unknown, _opts: unknown, hooks: Parameters<Holder['run']>[3]) =>
      new Promise<ToolOutput>((resolve) => {
        release = resolve;
        setTimeout(() => {
          hooks?.onWait?.({
            approvalId: 'a1',
            reviewUrl: 'http://127.0.0.1:8787/review#a1',
            request: { method: 'DELETE', host: 'api.github.com', path: '/repos/acme/app' },
          });
        }, 60);
      }),
  } as unknown as Holder;
  const out = { exitCode: 0, stdout: '', stderr: '', truncated: false } as ToolOutput;
  const call = heldCall(
    holder,
    { cliTier: 'write', context: 'agent-step', tierSource: 'caller' },
    25,
    'gh_cli',
    {},
    { signal: new AbortController().signal, progress: (m) => said.push(m) },
  );
  await new Promise((r) => setTimeout(r, 140));
  release(out);
  t.equal(await call, out, 'the holder’s answer is the call’s');
  const n = said.length;
  await new Promise((r) => setTimeout(r, 80));
  t.equal(said.length, n, 'no beat after the call ended');
  t.match(said[0], /^running gh_cli \(\d+ s\)$/, 'first: running');
  t.ok(
    said.some((m) =>
      m.startsWith('waiting for a person to approve DELETE api.github.com/repos/acme/app: approval a1'),
    ),
    'then: waiting, with the request and the approval',
  );
  t.end();
});

t.test('the hold: only a pending approval in an agent step with a person is waited for', (t) => {
  const pending = new BrokerError('CLI_APPROVAL_PENDING', {
    details: {
      approvalId: 'a1',
      request: { method: 'DELETE', host: 'api.github.com', path: '/r' },
      runId: 'r1',
    },
  });
  const cases: Record<string, [unknown, string, boolean]> = {
    'pending, agent step': [pending, 'agent-step', true],
    'pending, chat': [pending, 'chat', false],
    'pending, an agent step that never asks': [pending, 'agent-step-never-asks', false],
    'another code': [new BrokerError('CLI_TIMEOUT'), 'agent-step', false],
    'no catalogue error': [new Error('x'), 'agent-step', false],
  };
  t.plan(Object.keys(cases).length);
  for (const [name, [e, context, held]] of Object.entries(cases)) {
    const got = heldPause(e, { context: context as never });
    if (held)
      t.match(got, { id: 'a1', request: { method: 'DELETE', host: 'api.github.com', path: '/r' } }, name);
    else t.equal(got, undefined, name);
  }
});

t.test('the hold: a held call’s end is one more execution event of its run', (t) => {
  const host = {
    tools: () => [{ id: 'github:cli:gh', name: 'gh_cli', description: '', inputSchema: {} }],
  } as unknown as ToolHost;
  const e = heldEndEvent(
    host,
    'gh_cli',
    { runId: 'r1', cliTier: 'write', cliTierReason: 'requested', approvalId: 'a1' },
    new BrokerError('SERVE_APPROVAL_TIMEOUT'),
  );
  t.match(e, {
    type: 'extension.execution.failed',
    runId: 'r1',
    extensionId: 'github',
    cliId: 'gh',
    cliTier: 'write',
    cliTierReason: 'requested',
    code: 'SERVE_APPROVAL_TIMEOUT',
    labels: { approvalId: 'a1' },
  });
  const unknown = heldEndEvent(host, 'nope', { cliTier: 'admin' }, new Error('x'));
  t.match(unknown, { runId: '', extensionId: '', cliTier: 'read', code: 'INTERNAL_ERROR' });
  t.notOk('cliId' in unknown || 'labels' in unknown);
  t.end();
});
