import t from 'tap';
import { BUNDLED_TOOLS } from '../../src/commands/index.js';
import { runCli, testCli } from '../cli/fixtures/helpers.js';
import { GHE } from '../helpers/seed.js';
import { type Json, serveFixture, TOKENS } from './helpers.js';

// What a person reads before approving a held request, through the real server with real gh
// against the mock vendor: the whole target (path and query) with secret-shaped values
// redacted, in the API's approval objects and in `clibroker approvals show|list`; a target
// that cannot be shown faithfully is refused as CLI_CONFIRMATION_UNREVIEWABLE and never
// becomes an approval; a right-to-left override reads as `\u202E` everywhere. The page is
// checked in chromium by review.test.ts.

t.setTimeout(300_000);
const RLO = '\u202E';
/** secret-shaped, and not the connection's own token (that one is masked as a known secret) */
const PASTED = 'ghp_PastedIntoTheQuery000000000000000042';

const f = await serveFixture();
t.teardown(async () => {
  await f.stop();
  await f.d.close();
});
const cli = testCli(BUNDLED_TOOLS);
const show = async (id: string) => {
  const r = await runCli(cli, ['approvals', 'show', '--config', f.d.file, '--id', id]);
  t.equal(r.code, 0, r.stderr);
  return r;
};
const gh = (args: string[], stdin?: string) =>
  f.call('POST', '/v1/tools/execute', TOKENS.executor, {
    toolId: 'gh_cli',
    input: { args, ...(stdin !== undefined ? { stdin } : {}) },
    cliTier: 'write',
  });
const reject = async (id: string, call: Promise<{ status: number; json: Json }>) => {
  t.equal((await f.call('POST', `/v1/approvals/${id}/reject`, TOKENS.alice)).status, 200);
  t.match((await call).json.error, { code: 'EXEC_ACTION_CONFIRMATION_DECLINED' });
};

t.test('a held DELETE shows its query, in the API and in approvals show/list', async (t) => {
  const call = gh(['api', '-X', 'DELETE', `repos/acme/app/issues/comments/7?purge=all&token=${PASTED}`]);
  const [a] = await f.pending();
  const target = '/api/v3/repos/acme/app/issues/comments/7?purge=all&token={redacted}';
  t.match(a.request, { method: 'DELETE', host: GHE, path: target }, 'the API object');
  const one = await f.call('GET', `/v1/approvals/${a.id}`, TOKENS.alice);
  t.equal(one.json.result.request.path, target, 'GET /v1/approvals/{id}');
  const out = await show(a.id);
  t.match(out.env, { success: true, data: { id: a.id, method: 'DELETE', path: target } });
  const list = await runCli(cli, ['approvals', 'list', '--config', f.d.file, '--status', 'pending']);
  t.match(JSON.parse(list.stdout).data.approvals, [{ id: a.id, path: target }], 'approvals list');
  for (const [where, text] of [
    ['the API', JSON.stringify(a)],
    ['approvals show', out.stdout],
  ] as const)
    t.notOk(text.includes(PASTED), `${where}: the pasted token is not shown`);
  await reject(a.id, call);
  t.equal(f.deletes(), 0);
});

t.test('a target that cannot be shown whole is unreviewable and never an approval', async (t) => {
  const before = (await f.call('GET', '/v1/approvals', TOKENS.alice)).json.result.approvals.length;
  for (const [why, endpoint, words] of [
    ['a secret-shaped query name', `repos/acme/app?${PASTED}=1`, /query parameter name looks like a secret/],
    ['longer than the reviewer is shown', `repos/acme/app?pad=${'x'.repeat(2100)}`, /longer than 2048/],
  ] as const) {
    const r = await gh(['api', '-X', 'DELETE', endpoint]);
    const text = JSON.stringify(r.json);
    t.match(text, /CLI_CONFIRMATION_UNREVIEWABLE/, `${why}: refused as unreviewable`);
    t.match(text, words, `${why}: the refusal says why`);
    t.notOk(text.includes(PASTED), `${why}: no secret in the answer`);
  }
  const after = (await f.call('GET', '/v1/approvals', TOKENS.alice)).json.result.approvals.length;
  t.equal(after, before, 'no approval was created');
  t.equal(f.deletes(), 0);
});

t.test('a right-to-left override in args, stdin and body reads as \\u202E', async (t) => {
  const body = `{"note":"${RLO}exe.txt"}`;
  const call = gh(['api', '-X', 'DELETE', 'repos/acme/app', '--input', '-', '--jq', `.x${RLO}`], body);
  const [a] = await f.pending();
  t.match(a, {
    args: ['api', '-X', 'DELETE', 'repos/acme/app', '--input', '-', '--jq', '.x\\u202E'],
    stdinPreview: '{"note":"\\u202Eexe.txt"}',
    request: { bodyPreview: '{"note":"\\u202Eexe.txt"}' },
  });
  t.notOk(JSON.stringify(a).includes(RLO), 'the API object holds no override');
  const out = await show(a.id);
  t.notOk(out.stdout.includes(RLO), 'approvals show prints no override');
  t.match(out.env, {
    data: {
      bodyPreview: '{"note":"\\u202Eexe.txt"}',
      toolArgs: {
        args: ['api', '-X', 'DELETE', 'repos/acme/app', '--input', '-', '--jq', '.x\\u202E'],
        stdin: '{"note":"\\u202Eexe.txt"}',
      },
    },
  });
  await reject(a.id, call);
});
