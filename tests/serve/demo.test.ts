import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import { buildBinary } from '../cli/fixtures/helpers.js';
import { startProcess } from '../helpers/server-process.js';
import type { Json } from './helpers.js';

// `clibroker serve --demo` from the built binary, run with the command the README shows (its
// serve-demo block) plus `--port 0`: what it prints is the README's text block once the port,
// the tokens, the pid and the directory are put back; the printed tokens drive one MCP call,
// one Platform API call and a destructive call approved with the printed reviewer token;
// SIGTERM stops it with exit 0 and the temp directory gone.

t.setTimeout(300_000);
const ROOT = resolve(import.meta.dirname, '../..');
const { bin } = await buildBinary();
t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));
const PATH = process.env['PATH'] ?? '/usr/bin:/bin';

/** The README's serve-demo block: the command's arguments, the packages npx fetches, and the text it shows. */
function readmeBlock(): { args: string[]; packages: string[]; output: string } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = /<!-- serve-demo:begin[^>]*-->([\s\S]*?)<!-- serve-demo:end -->/.exec(readme)?.[1];
  const command = block && /```sh\n([^\n]*)\n```/.exec(block)?.[1];
  const output = block && /```text\n([\s\S]*?)```/.exec(block)?.[1];
  if (!command || !output)
    throw new Error('README.md has no serve-demo block with a sh command and its text');
  // npx [-p <package>]… clibroker <args>: the packages npx is told to fetch, then the command
  const words = command.trim().split(/\s+/);
  const packages: string[] = [];
  let at = 1;
  for (; words[at] === '-p' && words[at + 1] !== undefined; at += 2) packages.push(words[at + 1]!);
  if (words[0] !== 'npx' || words[at] !== 'clibroker') throw new Error(`not a clibroker command: ${command}`);
  return { args: words.slice(at + 1), packages, output };
}

t.test('serve --demo: the README command, its endpoints and tokens work; SIGTERM cleans up', async (t) => {
  const readme = readmeBlock();
  t.same(readme.args, ['serve', '--demo'], 'the README shows the plain command');
  // the demo keeps a SQLite store: npx must fetch its driver (an optional peer) with clibroker
  t.same(
    readme.packages,
    ['clibroker', 'better-sqlite3'],
    'npx is told to fetch clibroker and better-sqlite3',
  );
  const demo = startProcess(t, process.execPath, [bin, ...readme.args, '--port', '0'], { env: { PATH } });
  const banner = await demo.until(/^Configuration and store: .*\n/m);
  const listening = JSON.parse(banner.split('\n')[0]!);
  t.match(listening, {
    event: 'serve.listening',
    url: /^http:\/\/127\.0\.0\.1:\d+$/,
    tools: ['gh_cli', 'curl_cli'],
    withheld: [],
  });
  const url = String(listening.url);
  const grab = (re: RegExp): string => {
    const m = re.exec(banner);
    if (!m?.[1]) throw new Error(`not printed: ${re}\n${banner}`);
    return m[1];
  };
  const mcpToken = grab(/^ {2}authorization: Bearer ([0-9a-f]{64})$/m);
  const executorToken = grab(/curl -s -H 'authorization: Bearer ([0-9a-f]{64})'/);
  const reviewerToken = grab(/reviewer token \(demo-reviewer\): ([0-9a-f]{64})$/m);
  const dir = grab(/^Configuration and store: (\S+) /m);
  t.equal(new Set([mcpToken, executorToken, reviewerToken]).size, 3, 'three different tokens');

  // the printed text is the README's, once what differs per run is put back
  const normal = banner
    .replaceAll(url, 'http://127.0.0.1:8787')
    .replaceAll(mcpToken, '<mcp token>')
    .replaceAll(executorToken, '<executor token>')
    .replaceAll(reviewerToken, '<reviewer token>')
    .replaceAll(dir, '/tmp/clibroker-demo-<random>')
    .replace(/"pid":\d+/, '"pid":<pid>');
  t.equal(normal, readme.output, "what it prints is the README's block");

  // the throwaway directory: 0700, every secret 0600
  t.equal(statSync(dir).mode & 0o777, 0o700, 'the directory is 0700');
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.secret')))
    t.equal(statSync(join(dir, f)).mode & 0o777, 0o600, `${f} is 0600`);
  t.ok(existsSync(join(dir, 'store.db')), 'a SQLite store in the directory');

  // one MCP call to completion, over Streamable HTTP with the printed header
  const mcpLine = JSON.parse(grab(/for an MCP host: (.*)$/m));
  const server = mcpLine.mcpServers['clibroker-demo'];
  t.same(server, { type: 'http', url: `${url}/mcp`, headers: { Authorization: `Bearer ${mcpToken}` } });
  const client = new Client({ name: 'clibroker-demo-test', version: '0.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } }),
  );
  const r = await client.callTool({ name: 'gh_cli', arguments: { args: ['api', 'user'] } });
  t.notOk(r.isError, 'the MCP call succeeds');
  t.match(r.structuredContent, { exitCode: 0, stdout: /"login":\s*"octocat"/ }, 'gh api user over MCP');
  await client.close();

  // the printed Platform API call, as printed
  const call = (method: string, path: string, token: string, body?: unknown) =>
    fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }).then(async (res) => ({ status: res.status, json: (await res.json()) as Json }));
  const printedBody = JSON.parse(grab(/ -d '([^']+)' /));
  const api = await call('POST', '/v1/tools/execute', executorToken, printedBody);
  t.match(api, { status: 200, json: { ok: true, result: { exitCode: 0, stdout: /"login":\s*"octocat"/ } } });

  // a destructive call waits for a person; the printed reviewer token approves it
  const held = call('POST', '/v1/tools/execute', executorToken, {
    toolId: 'gh_cli',
    input: { args: ['repo', 'delete', 'acme/app', '--yes'] },
    cliTier: 'write',
  });
  let pending: Json[] = [];
  for (let i = 0; i < 600 && pending.length === 0; i++) {
    const list = await call('GET', '/v1/approvals?status=pending', reviewerToken);
    pending = list.json.result?.approvals ?? [];
    if (pending.length === 0) await new Promise((res) => setTimeout(res, 100));
  }
  t.match(pending, [{ tool: 'gh_cli', request: { method: 'DELETE', path: '/repos/acme/app' } }]);
  const approved = await call('POST', `/v1/approvals/${pending[0].id}/approve`, reviewerToken);
  t.equal(approved.status, 200, 'approved with the printed reviewer token');
  const done = await held;
  t.match(done, { status: 200, json: { ok: true, result: { exitCode: 0, cliTier: 'write' } } });
  const view = await call('GET', `/v1/approvals/${pending[0].id}`, reviewerToken);
  t.match(view.json.result, { status: 'consumed', decidedBy: 'demo-reviewer' }, 'used once');

  demo.child.kill('SIGTERM');
  t.equal(await demo.exited, 0, 'SIGTERM: exit 0');
  t.match(JSON.parse(demo.out().trimEnd().split('\n').at(-1)!), {
    success: true,
    data: { status: 'stopped', signal: 'SIGTERM' },
  });
  t.notOk(existsSync(dir), 'the temp directory is gone');
});

t.test('serve --demo refuses --config and --mcp; serve without either asks for --config', async (t) => {
  const run = (args: string[]) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const c = spawn(process.execPath, [bin, 'serve', ...args], { env: { PATH }, stdio: 'pipe' });
      let out = '';
      c.stdout.on('data', (d) => {
        out += d;
      });
      c.on('exit', (code) => resolve({ code, out }));
    });
  for (const [args, flag] of [
    [['--demo', '--config', '/nonexistent.json'], 'config'],
    [['--demo', '--mcp', 'stdio'], 'mcp'],
    [[], 'config'],
  ] as const) {
    const r = await run([...args]);
    t.equal(r.code, 1, args.join(' '));
    t.match(JSON.parse(r.out), { success: false, error: { code: 'COMMAND_INPUT_INVALID', flag } });
  }
});
