// A host's integration test (node --test): before shipping an extension, check that its CLIs
// can be governed, for real, against clibroker's embedded mock vendor, and test its own wiring
// with the testing kit (clibroker/testing). Needs gh and curl on PATH; offline, no token.
//
// It prints, run as node --test --test-reporter=spec host-integration.test.mjs (the durations,
// shown as …, vary):
//
//   ✔ gh can be governed: it reads at tier read, and its write passes at tier write (…ms)
//   ✔ curl can be governed: it reads at tier read, and its write passes at tier write (…ms)
//   ✔ curl through the broker reaches the mock vendor with the stamped credential only (…ms)
//   ℹ tests 3
//   ℹ suites 0
//   ℹ pass 3
//   ℹ fail 0
//   ℹ cancelled 0
//   ℹ skipped 0
//   ℹ todo 0
//   ℹ duration_ms …
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import test from 'node:test';
import { promisify } from 'node:util';
import { conformanceTable, createBroker, knownConformance, mockVendor, runConformance } from 'clibroker';
import { childEnv, routeToMock, startMockVendor } from 'clibroker/testing';

for (const cli of ['gh', 'curl']) {
  test(`${cli} can be governed: it reads at tier read, and its write passes at tier write`, async () => {
    const known = knownConformance(cli);
    assert.ok(known, `clibroker ships conformance settings for ${cli}`);
    const report = await runConformance({
      extension: known.extension,
      cli,
      probe: known.probe,
      ...mockVendor(known.vendor),
    });
    assert.equal(report.verdict, 'pass', conformanceTable(report));
  });
}

// The same host's own wiring, against the testing kit: the broker routed to the GitHub-shaped
// mock vendor, curl given only the child environment, the real credential stamped by the broker.
test('curl through the broker reaches the mock vendor with the stamped credential only', async () => {
  const mock = await startMockVendor({ shape: 'github' });
  const broker = await createBroker({ upstream: routeToMock(mock) });
  try {
    const token = mock.connection?.kind === 'oauth_access_token' ? mock.connection.accessToken : '';
    const session = broker.openSession({
      egress: ['api.github.com'],
      credentials: { authorizationFor: (host) => (host === 'api.github.com' ? `token ${token}` : undefined) },
    });
    const env = childEnv(session);
    assert.ok(!JSON.stringify(env).includes(token), 'the child environment holds no credential');
    const { stdout } = await promisify(execFile)('curl', ['-sS', '-f', 'https://api.github.com/user'], {
      env: { ...env, PATH: '/usr/bin:/bin' },
    });
    assert.equal(JSON.parse(stdout).login, 'octocat');
    assert.equal(mock.log.length, 1);
    assert.equal(mock.log[0]?.headers.authorization, `token ${token}`, 'the broker stamped the real token');
    session.close();
  } finally {
    await broker.close();
    await mock.close();
  }
});
