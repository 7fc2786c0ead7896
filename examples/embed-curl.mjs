// Embed the broker and run curl through it: the broker holds the real token and stamps it on
// api.github.com only; curl holds a placeholder. Reads GITHUB_TOKEN; with CLIBROKER_EXAMPLE_VENDOR
// set (JSON {port, caPem}, as the test suite sets it) every host routes to that mock vendor.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createBroker } from 'clibroker';

const mock = process.env.CLIBROKER_EXAMPLE_VENDOR && JSON.parse(process.env.CLIBROKER_EXAMPLE_VENDOR);
const upstream = mock
  ? { ca: mock.caPem, resolve: () => ({ host: '127.0.0.1', port: mock.port }), allowAddresses: ['127.0.0.0/8'] }
  : undefined;
const token = process.env.GITHUB_TOKEN;

const events = [];
const broker = await createBroker({ upstream, onAudit: (e) => events.push(e) });
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
} finally {
  session.close();
  await broker.close();
  rmSync(dir, { recursive: true, force: true });
}
