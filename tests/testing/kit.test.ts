/**
 * The testing kit as a host uses it: a mock vendor, a broker routed to it in one call, and
 * real curl run with only the kit's child environment going through a session to the mock.
 * Imports are the public surface only — `clibroker` (src/index.ts) and `clibroker/testing`
 * (src/testing/index.ts) — taken from src because the tests run on the sources; the package
 * names themselves are exercised against the built package in tests/package/install.test.ts.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { createBroker } from '../../src/index.js';
import { CA_TRUST_VARS, childEnv, routeToMock, startMockVendor } from '../../src/testing/index.js';

const run = promisify(execFile);

/** curl with nothing but the kit's environment (and PATH to find curl). */
async function curl(env: Record<string, string>, url: string): Promise<unknown> {
  const { stdout } = await run('curl', ['-sS', '-f', url], { env: { ...env, PATH: '/usr/bin:/bin' } });
  return JSON.parse(stdout);
}

t.test(
  'curl reaches the GitHub-shaped mock through a routed broker, with the stamped credential',
  async (t) => {
    const mock = await startMockVendor({ shape: 'github' });
    const broker = await createBroker({ upstream: routeToMock(mock) });
    t.teardown(async () => {
      await broker.close();
      await mock.close();
    });
    const token = mock.connection?.kind === 'oauth_access_token' ? mock.connection.accessToken : '';
    t.ok(token, 'the github mock says which credential it accepts');
    const session = broker.openSession({
      egress: ['api.github.com'],
      credentials: { authorizationFor: (host) => (host === 'api.github.com' ? `token ${token}` : undefined) },
    });
    const env = childEnv(session);
    t.equal(env.HTTPS_PROXY, session.proxyUrl);
    t.equal(env.https_proxy, session.proxyUrl);
    t.equal(env.NO_PROXY, '', 'NO_PROXY is emptied');
    const caFile = env.SSL_CERT_FILE!;
    for (const k of CA_TRUST_VARS) t.equal(env[k], caFile, `${k} names the CA file`);
    t.equal(readFileSync(caFile, 'utf8'), session.caCertPem, 'the file holds the session CA');
    t.equal(statSync(caFile).mode & 0o777, 0o600, 'readable by the owner only');

    t.match(await curl(env, 'https://api.github.com/user'), { login: 'octocat' });
    t.equal(mock.log.length, 1);
    t.equal(mock.log[0]?.headers.authorization, `token ${token}`, 'the broker stamped the credential');
    session.close();
  },
);

t.test('a generic mock echoes, or answers with the handler given', async (t) => {
  const echo = await startMockVendor({ shape: 'generic' });
  const custom = await startMockVendor({
    shape: 'generic',
    handler: (req) => ({ status: 200, body: { seen: req.path, q: req.query.get('q') } }),
  });
  t.teardown(async () => {
    await echo.close();
    await custom.close();
  });
  t.equal(echo.connection, undefined, 'a generic vendor checks no credential');
  for (const [mock, want] of [
    [echo, { method: 'GET', host: 'api.example.com', path: '/v1/things', authorization: false }],
    [custom, { seen: '/v1/things', q: 'x' }],
  ] as const) {
    const broker = await createBroker({ upstream: routeToMock(mock) });
    const session = broker.openSession({ egress: ['api.example.com'] });
    t.same(await curl(childEnv(session), 'https://api.example.com/v1/things?q=x'), want);
    session.close();
    await broker.close();
  }
});

t.test('the Azure-shaped mock hands out the client credential it accepts', async (t) => {
  const mock = await startMockVendor({ shape: 'azure' });
  t.teardown(() => mock.close());
  t.match(mock.connection, {
    kind: 'oauth_client_credentials',
    tokenUrl: /^https:\/\/login\.microsoftonline\.com\//,
  });
  const broker = await createBroker({ upstream: routeToMock(mock) });
  t.teardown(() => broker.close());
  const session = broker.openSession({ egress: ['management.azure.com'] });
  // No credential stamped: ARM answers 401, as the real one would.
  const env = childEnv(session);
  const got = await run(
    'curl',
    ['-sS', '-o', '/dev/null', '-w', '%{http_code}', 'https://management.azure.com/subscriptions'],
    {
      env: { ...env, PATH: '/usr/bin:/bin' },
    },
  );
  t.equal(got.stdout, '401');
});

t.test('childEnv leaves no CA file behind once the process exits', async (t) => {
  // a process of its own, as a test file is: it writes the CA, prints where, and exits
  const kit = new URL('../../src/testing/index.ts', import.meta.url).pathname;
  const script = `const { childEnv } = await import(${JSON.stringify(kit)});
const env = childEnv({ proxyUrl: 'http://u:p@127.0.0.1:1', caCertPem: 'PEM' });
const { existsSync } = await import('node:fs');
console.log(JSON.stringify({ file: env.SSL_CERT_FILE, there: existsSync(env.SSL_CERT_FILE) }));`;
  const { stdout } = await promisify(execFile)(process.execPath, [
    '--import',
    'tsx',
    '--input-type=module',
    '-e',
    script,
  ]);
  const { file, there } = JSON.parse(stdout) as { file: string; there: boolean };
  t.ok(there, 'the CA file is there while the process runs');
  t.notOk(existsSync(file), 'gone once it exited');
  t.notOk(existsSync(dirname(file)), 'with its directory');
});
