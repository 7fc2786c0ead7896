import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import type { ExecutionEvent } from '../../src/store/types.js';
import { type ServeFixture, serveFixture, TOKENS } from './helpers.js';

// What the agent is told, through the real MCP door (the SDK's client over Streamable HTTP, the
// seed deployment's pinned gh and curl isolated, the mock vendor behind them): a confirmation
// rule comes back as the call's own failure code, a refusal the CLI outlived is in the result,
// writes of unknown outcome are named, and every call — the host's own refusals and help from
// the tree included — leaves one execution event.

t.setTimeout(300_000);

async function mcp(f: ServeFixture): Promise<Client> {
  const client = new Client({ name: 'clibroker-test', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${f.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${TOKENS.mcp}` } },
  });
  await client.connect(transport);
  return client;
}

type Result = { isError?: boolean; structuredContent?: Record<string, unknown> };
const call = async (c: Client, name: string, args: unknown): Promise<Result> =>
  (await c.callTool({ name, arguments: args as Record<string, unknown> })) as Result;

async function executions(f: ServeFixture): Promise<ExecutionEvent[]> {
  const all = await f.host.store.listEvents({
    type: ['extension.execution.succeeded', 'extension.execution.failed'],
    limit: 100,
  });
  return all.map((e) => e.event as ExecutionEvent);
}

t.test('an agent step at tier write, over MCP', async (t) => {
  const f = await serveFixture();
  const c = await mcp(f);
  t.teardown(async () => {
    await c.close().catch(() => {});
    await f.stop();
    await f.d.close();
  });

  // a host outside egress that curl outlived: the call completed, and the refusal is in the result
  const outside = await call(c, 'curl_cli', { args: ['-sS', 'https://outside.example.org/ping'] });
  t.notOk(outside.isError, JSON.stringify(outside));
  t.match(outside.structuredContent, {
    exitCode: 0,
    outlivedRefusals: [
      { code: 'CLI_EGRESS_HOST_DENIED', method: 'GET', host: 'outside.example.org', path: '/ping' },
    ],
  });

  // a write at tier read (curl's connection is a token): refused, the CLI stopped part-way, so
  // the call's outcome is unknown and the agent is told what capped the tier
  const write = await call(c, 'curl_cli', {
    args: ['-sS', '-X', 'POST', '--data', '{}', 'https://api.atlassian.com/ex/jira/issues'],
  });
  t.equal(write.isError, true);
  t.match(write.structuredContent, {
    error: {
      code: 'POLICY_BLOCKED',
      message: /the connection's credential is a token .* The command's arguments cannot change the tier/,
      details: {
        policyCode: 'CLI_REQUEST_TIER_DENIED',
        outcomeUnknown: true,
        cliTierReason: 'token-credential',
      },
    },
  });
  t.equal(f.deletes(), 0, 'the DELETE was not sent');

  // the host's own answers: a tool not offered, input it refuses, help from the tree
  // a made-up id naming an extension: the event is never filed under that extension
  const missing = await call(c, 'github:cli:nope', { args: [] });
  t.match(missing.structuredContent, { error: { code: 'TOOL_VENDOR_CLI_NOT_OFFERED' } });
  const bad = await call(c, 'gh_cli', { args: 'api user' });
  t.match(bad.structuredContent, { error: { code: 'INVALID_TOOL_INPUT' } });
  const help = await call(c, 'gh_cli', { args: ['repo', '--help'] });
  t.notOk(help.isError, JSON.stringify(help));
  t.match(help.structuredContent, { exitCode: 0, cliTierReason: 'help-from-tree' });

  const events = await executions(f);
  t.equal(events.length, 5, 'one execution event per call');
  t.match(events, [
    {
      type: 'extension.execution.succeeded',
      cliId: 'curl',
      outlivedRefusals: [{ code: 'CLI_EGRESS_HOST_DENIED', host: 'outside.example.org' }],
    },
    {
      type: 'extension.execution.failed',
      cliId: 'curl',
      code: 'CLI_REQUEST_TIER_DENIED',
      outcome: 'unknown',
    },
    {
      type: 'extension.execution.failed',
      extensionId: '-',
      cliId: 'github:cli:nope',
      code: 'TOOL_VENDOR_CLI_NOT_OFFERED',
      refusedBy: 'host',
    },
    {
      type: 'extension.execution.failed',
      extensionId: 'github',
      cliId: 'gh',
      code: 'INVALID_TOOL_INPUT',
      refusedBy: 'host',
      cliTierReason: String,
    },
    { type: 'extension.execution.succeeded', cliId: 'gh', cliTier: 'read', cliTierReason: 'help-from-tree' },
  ]);
});

t.test('a step whose plan never asks a person: the rule is the failure code, over MCP', async (t) => {
  const f = await serveFixture({
    over: (c) => ({ ...c, serve: { ...c.serve, context: 'agent-step-never-asks' } }),
  });
  const c = await mcp(f);
  t.teardown(async () => {
    await c.close().catch(() => {});
    await f.stop();
    await f.d.close();
  });
  const del = await call(c, 'gh_cli', { args: ['api', '-X', 'DELETE', 'repos/acme/app'] });
  t.equal(del.isError, true);
  t.match(del.structuredContent, { error: { code: 'CLI_CONFIRMATION_NOT_APPROVABLE' } });
  const details = (del.structuredContent?.['error'] as { details?: Record<string, unknown> } | undefined)
    ?.details;
  t.equal(details?.['policyCode'], undefined, 'not POLICY_BLOCKED with a policyCode');
  t.equal(f.deletes(), 0);
  t.match(await executions(f), [
    { type: 'extension.execution.failed', code: 'CLI_CONFIRMATION_NOT_APPROVABLE' },
  ]);
});
