import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import t from 'tap';
import { buildBinary } from '../cli/fixtures/helpers.js';
import { runBinary } from '../daemon/helpers.js';
import { SEED_SECRETS, seedDeployment } from '../helpers/seed.js';
import { TOKENS } from './helpers.js';

// `clibroker serve --config <file> --port 0` as an operator starts it: the built binary, the
// seed deployment's configuration with a serve block (tokens in 0600 files), nothing of the
// test's environment. It prints one listening line, answers, and stops on SIGTERM.

t.setTimeout(300_000);
const { bin } = await buildBinary();
t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));
const PATH = process.env['PATH'] ?? '/usr/bin:/bin';

t.test('serve --config: listens on 127.0.0.1, answers, stops on SIGTERM', async (t) => {
  const d = await seedDeployment((c, dir) => ({
    ...c,
    serve: { port: 8787, executorToken: dir.secret('executor', TOKENS.executor) },
  }));
  t.teardown(() => d.close());
  const child = spawn(process.execPath, [bin, 'serve', '--config', d.file, '--port', '0'], {
    env: { PATH },
    stdio: 'pipe',
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (c) => {
    err += c;
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const listening = await new Promise<Record<string, unknown>>((resolve, reject) => {
    child.stdout.on('data', (c) => {
      out += c;
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!));
    });
    void exited.then((code) => reject(new Error(`exited ${code}: ${out}${err}`)));
  });
  t.match(listening, {
    event: 'serve.listening',
    url: /^http:\/\/127\.0\.0\.1:\d+$/,
    tools: ['gh_cli', 'curl_cli', 'az_cli'],
  });
  t.not(listening['url'], 'http://127.0.0.1:8787', '--port overrides serve.port');
  const url = String(listening['url']);
  t.same(await (await fetch(`${url}/healthz`)).json(), { ok: true, result: { status: 'ok', store: 'ok' } });
  const run = await fetch(`${url}/v1/tools/execute`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKENS.executor}`, 'content-type': 'application/json' },
    body: JSON.stringify({ toolId: 'gh_cli', input: { args: ['api', 'user'] } }),
  });
  const body = await run.text();
  t.match(JSON.parse(body), { ok: true, result: { exitCode: 0 } }, body);
  const mcp = await fetch(`${url}/mcp`, { method: 'POST', body: '{}' });
  t.match(
    await mcp.json(),
    { error: { data: { code: 'SERVE_UNAUTHORIZED' } } },
    'no MCP token configured: closed',
  );
  child.kill('SIGTERM');
  t.equal(await exited, 0);
  t.match(JSON.parse(out.split('\n')[1]!), { success: true, data: { status: 'stopped', signal: 'SIGTERM' } });
  for (const s of [...SEED_SECRETS, TOKENS.executor])
    t.notOk(out.includes(s) || err.includes(s), 'no secret printed');
});

t.test('a literal token in the serve block is refused whole, the value never shown', async (t) => {
  const d = await seedDeployment((c) => ({
    ...c,
    serve: { executorToken: TOKENS.executor as never, reviewers: { alice: TOKENS.alice as never } },
  }));
  t.teardown(() => d.close());
  const r = await runBinary(bin, ['serve', '--config', d.file], {});
  t.equal(r.code, 1);
  t.match(r.env, { success: false, error: { code: 'CONFIG_INVALID' } });
  const problems = r.env.error.details.problems as { path: string; code: string }[];
  t.same(problems.map((p) => `${p.path} ${p.code}`).sort(), [
    'serve.executorToken CONFIG_SECRET_INLINE',
    'serve.reviewers.alice CONFIG_SECRET_INLINE',
  ]);
  t.notOk(r.stdout.includes(TOKENS.executor) || r.stdout.includes(TOKENS.alice), 'the value is not repeated');
});
