// The README's quick start: two requests the broker refuses itself, before anything leaves the
// machine, so it needs no vendor and no token (only curl on PATH).
//
// It prints, run as is:
//
//   audit: deny DELETE api.github.com/repos/acme/app (destructive, CLI_REQUEST_TIER_DENIED)
//   curl got HTTP 422: POLICY_BLOCKED CLI_REQUEST_TIER_DENIED
//   audit: deny GET example.com/ (read, CLI_EGRESS_HOST_DENIED)
//   curl got HTTP 422: POLICY_BLOCKED CLI_EGRESS_HOST_DENIED
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBroker } from 'clibroker';

const broker = await createBroker({
  onAudit: (e) => console.log(`audit: ${e.decision} ${e.method} ${e.host}${e.path} (${e.class}, ${e.policyCode})`),
});
const session = broker.openSession({ egress: ['api.github.com'], tier: 'read' });
const caFile = join(tmpdir(), `clibroker-ca-${session.id}.pem`);
writeFileSync(caFile, session.caCertPem);

// The child gets the session's proxy URL and CA, never a credential.
const curl = (...args) =>
  new Promise((resolve) => {
    const env = { PATH: process.env.PATH, HTTPS_PROXY: session.proxyUrl };
    execFile('curl', ['-sS', '-w', '\\n%{http_code}', '--cacert', caFile, ...args], { env }, (_, out) => {
      const [body, status] = out.split('\n');
      const { error } = JSON.parse(body); // the refusal, as the child reads it
      resolve(`curl got HTTP ${status}: ${error.code} ${error.policyCode}`);
    });
  });

// A destructive request at tier read: refused before anything leaves the machine.
console.log(await curl('-X', 'DELETE', 'https://api.github.com/repos/acme/app'));
// A host outside the egress list: refused at CONNECT.
console.log(await curl('https://example.com/'));

session.close();
await broker.close();
rmSync(caFile);
