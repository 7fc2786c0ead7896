// Embed the broker and run curl through it: the broker holds the real token and stamps it on
// api.github.com only; curl holds a placeholder.
//
// By default it runs offline, against clibroker's embedded GitHub-like mock vendor (started
// here through clibroker/testing, as a host's integration test does). To run it against the
// real api.github.com instead: CLIBROKER_EXAMPLE_REAL=1 GITHUB_TOKEN=<a token> node embed-curl.mjs
// (the login is then yours, and the last line is not printed).
//
// It prints, run as is:
//
//   curl: login octocat
//   audit: egress.allowed GET api.github.com/user → 200
//   stats: 1 request, 1 forwarded
//   the vendor got the broker's token, not curl's placeholder: true
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createBroker } from 'clibroker';
import { routeToMock, startMockVendor } from 'clibroker/testing';

const real = process.env.CLIBROKER_EXAMPLE_REAL === '1';
if (real && !process.env.GITHUB_TOKEN) {
  console.error('CLIBROKER_EXAMPLE_REAL=1 runs against api.github.com: set GITHUB_TOKEN to a GitHub token.');
  process.exit(1);
}
const mock = real ? undefined : await startMockVendor({ shape: 'github' });
const token = mock
  ? mock.connection?.kind === 'oauth_access_token' && mock.connection.accessToken
  : process.env.GITHUB_TOKEN;

const events = [];
const broker = await createBroker({ upstream: mock && routeToMock(mock), onAudit: (e) => events.push(e) });
const session = broker.openSession({
  egress: ['api.github.com'],
  tier: 'read',
  credentials: { authorizationFor: (host) => (host === 'api.github.com' ? `token ${token}` : undefined) },
});
const dir = mkdtempSync(join(tmpdir(), 'clibroker-example-'));
writeFileSync(join(dir, 'ca.pem'), session.caCertPem);
try {
  // curl runs as a child process; the broker serves it from this process's event loop (so not spawnSync)
  const { stdout } = await promisify(execFile)(
    'curl',
    ['-sS', '--fail-with-body', '--cacert', join(dir, 'ca.pem'), '-H', 'Authorization: token placeholder', 'https://api.github.com/user'],
    { env: { PATH: process.env.PATH, HTTPS_PROXY: session.proxyUrl } },
  );
  console.log(`curl: login ${JSON.parse(stdout).login}`);
  for (const e of events) console.log(`audit: ${e.type} ${e.method} ${e.host}${e.path} → ${e.status}`);
  console.log(`stats: ${session.stats.requests} request, ${session.stats.forwarded} forwarded`);
  // the mock vendor logs what it received: the Authorization header is the broker's, not curl's
  if (mock) console.log(`the vendor got the broker's token, not curl's placeholder: ${mock.log[0]?.headers.authorization === `token ${token}`}`);
} finally {
  session.close();
  await broker.close();
  await mock?.close();
  rmSync(dir, { recursive: true, force: true });
}
