import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { atWrite, REAL_TOKEN, runFixture } from './fixtures.js';

t.test('curl: a method-override header is stripped; the vendor sees a plain GET with the real token', async (t) => {
  const f = await runFixture(t);
  const r = await f.runner.run(f.input('curl', ['-sS', '-H', 'X-HTTP-Method-Override: DELETE', '-H', 'Authorization: token placeholder', 'https://api.github.com/user']));
  t.equal(r.status, 'completed', r.stderr);
  t.equal(JSON.parse(r.stdout).login, 'octocat');
  t.equal(f.vendor.log[0]!.method, 'GET');
  t.notOk(f.vendor.log[0]!.headers['x-http-method-override']);
  t.equal(f.vendor.log[0]!.headers.authorization, `token ${REAL_TOKEN}`);
});

t.test('curl: an upload over the cap is refused and nothing reaches the vendor', async (t) => {
  const f = await runFixture(t);
  const dir = mkdtempSync(join(tmpdir(), 'clibroker-run-'));
  const big = join(dir, 'big.bin');
  writeFileSync(big, Buffer.alloc(8 * 1024 * 1024 + 1, 1));
  // The sandbox's HOME is fresh, but the file path is readable: curl runs with the host filesystem (plain profile).
  const r = await f.runner.run(f.input('curl', ['-sS', '-f', '-T', big, 'https://api.github.com/repos/acme/app/releases/1/assets'], atWrite));
  t.equal(r.status, 'refused');
  if (r.status === 'refused') t.equal(r.refusal.code, 'CLI_UPLOAD_TOO_LARGE');
  t.equal(f.vendor.log.length, 0);
});

t.test('curl: a WebSocket upgrade is refused', async (t) => {
  const f = await runFixture(t);
  const r = await f.runner.run(f.input('curl', ['-sS', '-f', '--http1.1', '-H', 'Connection: Upgrade', '-H', 'Upgrade: websocket', '-H', 'Sec-WebSocket-Version: 13', '-H', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'https://api.github.com/socket'], atWrite));
  t.equal(r.status, 'refused');
  if (r.status === 'refused') t.equal(r.refusal.code, 'CLI_UPGRADE_REFUSED');
  t.equal(f.vendor.log.length, 0);
});

t.test('curl at tier read: a GraphQL mutation is refused, a query passes', async (t) => {
  const f = await runFixture(t);
  const gql = (q: string) => ['-sS', '-f', '-X', 'POST', '-H', 'content-type: application/json', '--data', JSON.stringify({ query: q }), 'https://api.github.com/graphql'];
  const mutation = await f.runner.run(f.input('curl', gql('mutation { addStar(input: {starrableId: "x"}) { clientMutationId } }')));
  t.equal(mutation.status, 'refused');
  if (mutation.status === 'refused') t.equal(mutation.refusal.policyCode, 'CLI_REQUEST_TIER_DENIED');
  const query = await f.runner.run(f.input('curl', gql('query { viewer { login } }')));
  t.equal(query.status, 'completed', query.stderr);
  t.same(JSON.parse(query.stdout), { data: { viewer: { login: 'octocat' } } });
  t.equal(f.vendor.log.length, 1, 'only the query reached the vendor');
});

t.test('a destructive request after a write in the same command: CLI_CONFIRMATION_AFTER_WRITE, the write recorded unknown', async (t) => {
  const f = await runFixture(t);
  const r = await f.runner.run(
    f.input('curl', ['-sS', '-f', '-X', 'POST', '--data', '{"title":"x"}', 'https://api.github.com/repos/acme/app/issues', '--next', '-sS', '-f', '-X', 'DELETE', 'https://api.github.com/repos/acme/app'], atWrite),
  );
  t.equal(r.status, 'refused');
  if (r.status === 'refused') t.equal(r.refusal.policyCode, 'CLI_CONFIRMATION_AFTER_WRITE');
  t.same(r.unknownOutcomes, [{ method: 'POST', host: 'api.github.com', path: '/repos/acme/app/issues' }]);
  t.same(f.vendor.log.map((x) => x.method), ['POST'], 'the DELETE was not sent');
  t.equal((await f.store.listApprovals()).length, 0, 'no approval: re-running would repeat the POST');
});

t.test('a destructive request whose body cannot be shown: CLI_CONFIRMATION_UNREVIEWABLE', async (t) => {
  const f = await runFixture(t);
  const dir = mkdtempSync(join(tmpdir(), 'clibroker-run-'));
  const bin = join(dir, 'body.bin');
  writeFileSync(bin, Buffer.from([0, 1, 2, 3, 255, 254, 0, 0]));
  const r = await f.runner.run(f.input('curl', ['-sS', '-f', '-X', 'DELETE', '-H', 'content-type: application/octet-stream', '--data-binary', `@${bin}`, 'https://api.github.com/repos/acme/app'], atWrite));
  t.equal(r.status, 'refused');
  if (r.status === 'refused') t.equal(r.refusal.policyCode, 'CLI_CONFIRMATION_UNREVIEWABLE');
  t.equal(f.vendor.log.length, 0);
});

t.test('a destructive request with a JSON body pauses with a redacted body preview', async (t) => {
  const f = await runFixture(t);
  const body = JSON.stringify({ reason: 'cleanup', token: 'ghp_abcdefghijklmnopqrstuvwxyz012345' });
  const r = await f.runner.run(f.input('curl', ['-sS', '-f', '-X', 'DELETE', '-H', 'content-type: application/json', '--data', body, 'https://api.github.com/repos/acme/app'], atWrite));
  t.equal(r.status, 'paused');
  if (r.status !== 'paused') return;
  t.match(r.approval.bodyPreview, /"reason":"cleanup"/);
  t.notMatch(r.approval.bodyPreview, /ghp_abcdef/, 'secret-shaped values are redacted in the preview');
  t.equal(f.vendor.log.length, 0);
});
