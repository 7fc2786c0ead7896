/**
 * A vendor that reflects the request (a debug endpoint, an error page quoting the
 * Authorization header) must not hand the real credential to the agent: what clibroker
 * stamped is masked in the result's stdout and stderr. Real curl and gh.
 */
import t from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import type { Connection } from '../../src/credentials/types.js';
import { defineExtension } from '../../src/manifest/define.js';
import { githubVendor } from '../../src/mockvendor/github.js';
import { startMockVendor } from '../../src/mockvendor/server.js';
import { createRunner, type RunInput } from '../../src/runs/index.js';
import { openSqliteStore } from '../../src/store/index.js';
import { leakGuard } from '../helpers/leaks.js';
import { githubExtension, REAL_TOKEN } from './fixtures.js';

const PASSWORD = 'AtlassianApiTokenReflected0001xyz';

async function fixture(t: { teardown(fn: () => unknown): void }) {
  const gh = githubVendor({ token: [REAL_TOKEN] });
  const vendor = await startMockVendor((req) => {
    // Reflects the Authorization header in the body and in a response header, as some debug endpoints do.
    // The credential straddles the 2 MiB output cap: its first part is the last thing kept.
    if (req.path === '/straddle')
      return {
        status: 200,
        headers: { 'content-type': 'text/plain' },
        body: `${'x'.repeat(2 * 1024 * 1024 - 20)}${String(req.headers.authorization).slice('token '.length)}${'y'.repeat(100)}`,
      };
    // Decodes a Basic pair and prints its password, as an error page quoting the login might.
    if (req.path === '/echo-password')
      return {
        status: 200,
        headers: { 'content-type': 'text/plain' },
        body: `password was ${Buffer.from(String(req.headers.authorization).slice('Basic '.length), 'base64').toString().split(':')[1]}\n`,
      };
    if (req.path === '/echo')
      return {
        status: 200,
        headers: { 'x-echo-authorization': String(req.headers.authorization) },
        body: { authorization: req.headers.authorization, login: 'octocat' },
      };
    return gh(req);
  });
  const guard = leakGuard([REAL_TOKEN, PASSWORD]);
  const broker = await createBroker({
    upstream: { ca: vendor.caPem, resolve: vendor.resolve, allowAddresses: ['127.0.0.0/8'] },
    logger: guard.logger,
    onAudit: guard.onAudit,
  });
  const store = openSqliteStore(':memory:');
  t.teardown(async () => {
    await broker.close();
    await vendor.close();
    await store.close();
    guard.assertClean();
  });
  const runner = createRunner({ broker, store, logger: guard.logger });
  const input = (cli: string, args: string[], over: Partial<RunInput> = {}): RunInput => ({
    extension: githubExtension,
    cli,
    args,
    connection: { kind: 'oauth_access_token', accessToken: REAL_TOKEN },
    tier: { requested: 'read', organizationCeiling: 'write', assignmentAllow: 'write', identity: 'assigned' },
    context: { kind: 'agent-step' },
    deadlineMs: 60_000,
    ...over,
  });
  return { vendor, runner, input };
}

t.test(
  'a reflected credential never reaches the result: curl -v (headers on stderr, body on stdout) and gh api',
  async (t) => {
    const f = await fixture(t);
    const curl = await f.runner.run(f.input('curl', ['-sS', '-v', 'https://api.github.com/echo']));
    t.equal(curl.status, 'completed', curl.stderr.slice(0, 300));
    t.equal(
      f.vendor.log[0]!.headers.authorization,
      `token ${REAL_TOKEN}`,
      'the vendor did get the real token',
    );
    t.match(curl.stdout, /"login":"octocat"/, 'the rest of the answer is delivered');
    t.match(curl.stderr, /x-echo-authorization/i);
    t.notOk(curl.stdout.includes(REAL_TOKEN), 'not on stdout');
    t.notOk(curl.stderr.includes(REAL_TOKEN), 'not on stderr');
    const gh = await f.runner.run(f.input('gh', ['api', '--include', '/echo']));
    t.equal(gh.status, 'completed', gh.stderr.slice(0, 300));
    t.match(gh.stdout, /octocat/);
    t.notOk(gh.stdout.includes(REAL_TOKEN) || gh.stderr.includes(REAL_TOKEN), 'gh: not in the result');
  },
);

t.test('Basic: neither the password nor the base64 pair reaches the result', async (t) => {
  const f = await fixture(t);
  const ext = defineExtension({
    id: 'jira',
    egress: ['acme.atlassian.net'],
    toolkits: { jira: { credential: 'auth.default' } },
    clis: [{ id: 'curl', binary: { image: 'plain', entrypoint: 'curl' } }],
  });
  const connection: Connection = { kind: 'basic', username: 'bot@acme.example', password: PASSWORD };
  const r = await f.runner.run(
    f.input('curl', ['-sS', '-i', 'https://acme.atlassian.net/echo'], { extension: ext, connection }),
  );
  t.equal(r.status, 'completed', r.stderr.slice(0, 300));
  const pair = Buffer.from(`bot@acme.example:${PASSWORD}`).toString('base64');
  t.equal(f.vendor.log[0]!.headers.authorization, `Basic ${pair}`);
  t.notOk(r.stdout.includes(pair) || r.stdout.includes(PASSWORD), 'masked on stdout');
});

t.test(
  'a credential cut by the output cap: its first part is not left at the end of the output',
  async (t) => {
    const f = await fixture(t);
    const r = await f.runner.run(f.input('curl', ['-sS', 'https://api.github.com/straddle']));
    t.match(r, { status: 'completed', truncated: true });
    t.ok(r.stdout.startsWith('xxxx'));
    t.notOk(
      r.stdout.endsWith(REAL_TOKEN.slice(0, 20)),
      'the 20 characters of the token before the cut are not delivered',
    );
    t.notOk(r.stdout.slice(-40).includes(REAL_TOKEN.slice(0, 8)), 'nor any part of them');
  },
);

t.test("the connection's own secret is masked however short it is", async (t) => {
  const f = await fixture(t);
  const ext = defineExtension({
    id: 'jira',
    egress: ['acme.atlassian.net'],
    toolkits: { jira: { credential: 'auth.default' } },
    clis: [{ id: 'curl', binary: { image: 'plain', entrypoint: 'curl' } }],
  });
  const short = 'Zq7w';
  const connection: Connection = { kind: 'basic', username: 'bot@acme.example', password: short };
  const r = await f.runner.run(
    f.input('curl', ['-sS', 'https://acme.atlassian.net/echo-password'], { extension: ext, connection }),
  );
  t.equal(r.status, 'completed', r.stderr.slice(0, 300));
  t.equal(r.stdout, 'password was ****\n', 'the 4-character password is masked, the rest kept');
});
