import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { buildBinary } from '../cli/fixtures/helpers.js';
import { stdioClient } from './helpers.js';
import { runBinary } from '../daemon/helpers.js';
import { GHE, SEED, SEED_SECRETS, seedDeployment } from '../helpers/seed.js';

// `clibroker serve --config <file> --mcp stdio` as an MCP host launches it: the built binary
// spawned by the SDK's own client over stdio, the seed deployment (gh, curl, az pinned and
// isolated, secrets in 0600 files) behind it, the mock vendor answering. Every answer the
// client sees — and everything the server wrote to stderr — is checked for the secrets.

t.setTimeout(600_000);
const { bin } = await buildBinary();
t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));
const PATH = process.env['PATH'] ?? '/usr/bin:/bin';

t.test('tools/list and tools/call through the SDK client', async (t) => {
  const d = await seedDeployment();
  const { client, transport, stderr: serverErr } = stdioClient(bin, d.file);
  const protocolErrors: unknown[] = [];
  client.onerror = (e) => protocolErrors.push(e);
  t.teardown(async () => {
    await client.close().catch(() => {});
    await d.close();
  });
  await client.connect(transport);
  const seen: string[] = [];
  const call = async (name: string, args: unknown) => {
    const r = await client.callTool({ name, arguments: args as Record<string, unknown> });
    seen.push(JSON.stringify(r));
    return r;
  };

  const { tools } = await client.listTools();
  seen.push(JSON.stringify(tools));
  t.same(
    tools.map((x) => x.name),
    ['gh_cli', 'curl_cli', 'az_cli'],
  );
  for (const tool of tools) {
    t.match(
      tool.inputSchema,
      {
        type: 'object',
        properties: { args: { type: 'array' }, stdin: { type: 'string' } },
        required: ['args'],
      },
      `${tool.name}: {args, stdin?}`,
    );
    t.ok(tool.description && tool.description.length > 0, `${tool.name} has a description`);
  }

  const gh = await call('gh_cli', { args: ['api', 'user'] });
  t.notOk(gh.isError, JSON.stringify(gh));
  t.match(gh.structuredContent, {
    exitCode: 0,
    truncated: false,
    cliTier: 'read',
    cliTierReason: 'requested',
    runId: String,
    stderr: String,
  });
  t.match(
    JSON.parse((gh.structuredContent as { stdout: string }).stdout),
    { login: 'octocat' },
    "the vendor's answer",
  );
  t.same(
    JSON.parse((gh.content as { text: string }[])[0]!.text),
    gh.structuredContent,
    'the text is the same output',
  );
  t.ok(
    d.vendor.log.some((r) => r.host === GHE && r.headers.authorization === `token ${SEED.ghToken}`),
    'the configured secret was stamped by the server',
  );

  const az = await call('az_cli', { args: ['group', 'list'] });
  t.match(az.structuredContent, { exitCode: 0 }, JSON.stringify(az));

  const write = await call('gh_cli', {
    args: ['api', '-X', 'POST', 'repos/acme/app/issues', '-f', 'title=x'],
  });
  t.equal(write.isError, true, 'a write at tier read is refused');
  t.match(write.structuredContent, {
    error: { code: 'POLICY_BLOCKED', details: { policyCode: 'CLI_REQUEST_TIER_DENIED' } },
  });
  t.match((write.content as { text: string }[])[0]!.text, /^POLICY_BLOCKED: CLI_REQUEST_TIER_DENIED/);
  t.match(
    (write.content as { text: string }[])[0]!.text,
    /serve\.cliTier in the operator's configuration/,
    "over MCP the agent is told the server's setting capped the tier, not to pass one",
  );
  t.notOk(
    d.vendor.log.some((r) => r.path.includes('/issues')),
    'the write never reached the vendor',
  );

  const extra = await call('gh_cli', { args: ['api', 'user'], cliTier: 'write' });
  t.equal(extra.isError, true);
  t.match(
    extra.structuredContent,
    { error: { code: 'INVALID_TOOL_INPUT' } },
    'a tier in the input is refused, not obeyed',
  );
  const none = await call('gh_cli', {});
  t.match(
    none.structuredContent,
    { error: { code: 'INVALID_TOOL_INPUT' } },
    'no args: refused, not defaulted',
  );

  const unknown = await call('kubectl_cli', { args: ['get', 'pods'] });
  t.equal(unknown.isError, true);
  t.match(unknown.structuredContent, {
    error: { code: 'TOOL_VENDOR_CLI_NOT_OFFERED', details: { tools: ['gh_cli', 'curl_cli', 'az_cli'] } },
  });
  t.match((unknown.content as { text: string }[])[0]!.text, /^TOOL_VENDOR_CLI_NOT_OFFERED/);

  t.same(protocolErrors, [], 'stdout carried nothing but the protocol');
  await client.close();
  // the client closing stdin ends the session and closes the host
  for (let i = 0; i < 50 && !serverErr().includes('serve.mcp.stopped'); i++)
    await new Promise((r) => setTimeout(r, 100));
  t.match(serverErr(), /serve\.mcp\.stopped/, 'the session ended when the client closed stdin');
  for (const s of SEED_SECRETS) {
    t.notOk(
      seen.some((x) => x.includes(s)),
      'no secret in any answer',
    );
    t.notOk(serverErr().includes(s), 'no secret in the logs');
  }
});

t.test('a broken configuration is refused before serving, as a failure envelope', async (t) => {
  const d = await seedDeployment((c) => ({ ...c, organization: { ceiling: 'root' as never } }));
  t.teardown(() => d.close());
  const r = await runBinary(bin, ['serve', '--config', d.file, '--mcp', 'stdio'], {});
  t.equal(r.code, 1);
  t.match(r.env, { success: false, error: { code: 'CONFIG_INVALID' } }, r.stdout + r.stderr);
});

t.test('only the stdio transport exists', async (t) => {
  const r = await runBinary(bin, ['serve', '--config', '/nonexistent.json', '--mcp', 'http'], {});
  t.equal(r.code, 1);
  t.match(
    r.env,
    { success: false, error: { type: 'enum-mismatch', flag: 'mcp', retry: /--mcp stdio$/ } },
    r.stdout,
  );
});

t.test('stdout is the protocol only: no envelope after the session, exit 0 when stdin ends', async (t) => {
  const d = await seedDeployment();
  t.teardown(() => d.close());
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
  };
  const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
  const gh = {
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: { name: 'gh_cli', arguments: { args: ['api', 'user'] } },
  };
  // stdin ends right after the call: the call still completes and is answered before the exit
  const r = await runBinary(
    bin,
    ['serve', '--config', d.file, '--mcp', 'stdio'],
    {},
    `${[init, list, gh].map((m) => JSON.stringify(m)).join('\n')}\n`,
  );
  t.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n').filter((l) => l !== '');
  t.equal(lines.length, 3, r.stdout);
  t.match(
    lines.map((l) => JSON.parse(l)),
    [
      { jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'clibroker' } } },
      {
        jsonrpc: '2.0',
        id: 2,
        result: { tools: [{ name: 'gh_cli' }, { name: 'curl_cli' }, { name: 'az_cli' }] },
      },
      { jsonrpc: '2.0', id: 3, result: { structuredContent: { exitCode: 0, cliTier: 'read' } } },
    ],
  );
  t.notOk(r.stdout.includes('"success"'), 'no envelope');
  t.match(r.stderr, /serve\.mcp\.started/, 'the logs went to stderr');
});

t.test('SIGTERM ends the session: the host is closed and the exit is 0', async (t) => {
  const d = await seedDeployment();
  t.teardown(() => d.close());
  const child = spawn(process.execPath, [bin, 'serve', '--config', d.file, '--mcp', 'stdio'], {
    env: { PATH },
    stdio: 'pipe',
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (c) => {
    err += c;
  });
  const answered = new Promise<void>((r) =>
    child.stdout.on('data', (c) => {
      out += c;
      if (out.includes('\n')) r();
    }),
  );
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  // stdin stays open: only the signal can end it
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })}\n`);
  await answered;
  child.kill('SIGTERM');
  t.equal(await exited, 0, err);
  t.match(err, /serve\.mcp\.stopped/);
  t.match(JSON.parse(out.split('\n')[0]!), { id: 1, result: { tools: Array } });
  t.equal(out.split('\n').filter((l) => l !== '').length, 1, 'and nothing more on stdout');
});

t.test("the tier comes from the configuration's daemon block when it has one", async (t) => {
  const d = await seedDeployment((c, dir) => ({
    ...c,
    daemon: { socket: join(dir.dir, 'broker.sock'), cliTier: 'write' },
  }));
  t.teardown(() => d.close());
  const gh = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'gh_cli', arguments: { args: ['api', 'user'] } },
  };
  const r = await runBinary(
    bin,
    ['serve', '--config', d.file, '--mcp', 'stdio'],
    {},
    `${JSON.stringify(gh)}\n`,
  );
  t.equal(r.code, 0, r.stderr);
  // write was requested (without a daemon block the request is read: cliTierReason 'requested'),
  // and the assignment's switch, still off, capped it
  t.match(
    JSON.parse(r.stdout),
    {
      id: 1,
      result: { structuredContent: { exitCode: 0, cliTier: 'read', cliTierReason: 'assignment-read' } },
    },
    r.stdout,
  );
});
