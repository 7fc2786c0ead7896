/**
 * The main job (`npm run demo`): real curl, through the broker, against the embedded
 * GitHub-like mock vendor — no network needed. Shows a read-tier call passing, a mutation
 * refused at read tier, the same mutation passing at write tier, a destructive request
 * refused without approval, and the audit trail.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AuditEvent, createBroker, type Session } from '../src/index.js';
import { githubVendor } from '../src/mockvendor/github.js';
import { startMockVendor } from '../src/mockvendor/server.js';

const REAL_TOKEN = 'demo-real-token-kept-by-clibroker';
const PLACEHOLDER = 'placeholder-token-0000';

const vendor = await startMockVendor(githubVendor({ token: REAL_TOKEN }));
const events: AuditEvent[] = [];
const broker = await createBroker({ upstream: { ca: vendor.caPem, resolve: vendor.resolve }, onAudit: (e) => events.push(e) });
const work = mkdtempSync(join(tmpdir(), 'clibroker-demo-'));

function curl(session: Session, args: string[]): Promise<{ code: number; out: string }> {
  const ca = join(work, `${session.id}.pem`);
  writeFileSync(ca, session.caCertPem);
  return new Promise((resolve) => {
    execFile(
      'curl',
      ['-sS', '--max-time', '20', '-w', '\\n%{http_code}', '-H', `Authorization: token ${PLACEHOLDER}`, ...args],
      { env: { PATH: '/usr/bin:/bin', HOME: work, HTTPS_PROXY: session.proxyUrl, CURL_CA_BUNDLE: ca } },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: (stdout || stderr).trim() }),
    );
  });
}

const stamp = { authorizationFor: (host: string) => (host === 'api.github.com' ? `token ${REAL_TOKEN}` : undefined) };
const gql = (q: string): string[] => ['-X', 'POST', '-H', 'content-type: application/json', '--data', JSON.stringify({ query: q }), 'https://api.github.com/graphql'];
const steps: { tier: 'read' | 'write'; title: string; args: string[] }[] = [
  { tier: 'read', title: 'GET /user at tier read', args: ['https://api.github.com/user'] },
  { tier: 'read', title: 'GraphQL query IssueList at tier read', args: gql('fragment issue on Issue { number title }\nquery IssueList($owner: String!) { repository(owner: $owner, name: "app") { issues(first: 30) { nodes { ...issue } } } }') },
  { tier: 'read', title: 'GraphQL mutation addStar at tier read', args: gql('mutation { addStar(input: {starrableId: "R_kgDOAcmeApp"}) { clientMutationId } }') },
  { tier: 'write', title: 'GraphQL mutation addStar at tier write', args: gql('mutation { addStar(input: {starrableId: "R_kgDOAcmeApp"}) { clientMutationId } }') },
  { tier: 'write', title: 'DELETE /repos/acme/app at tier write (no approval channel yet)', args: ['-X', 'DELETE', 'https://api.github.com/repos/acme/app'] },
  { tier: 'write', title: 'GET https://evil.example.com/ (not in egress)', args: ['https://evil.example.com/'] },
];

console.log('clibroker demo — real curl through the broker to an embedded GitHub-like vendor\n');
for (const step of steps) {
  const session = broker.openSession({ egress: ['api.github.com'], tier: step.tier, credentials: stamp, labels: { step: step.title } });
  const r = await curl(session, step.args);
  session.close();
  const lines = r.out.split('\n');
  const status = lines.pop();
  console.log(`▶ ${step.title}\n  curl exit ${r.code}, HTTP ${status}: ${lines.join(' ').slice(0, 160)}\n`);
}

console.log('Audit trail (one canonical event per request):\n');
const rows = events.map((e) => [e.type, e.method, e.host, e.path, e.class ?? '-', e.decision, String(e.status ?? '-'), e.policyCode ?? e.code ?? '']);
const header = ['event', 'method', 'host', 'path', 'class', 'decision', 'status', 'code'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const fmt = (r: string[]): string => r.map((c, i) => c.padEnd(widths[i]!)).join('  ');
console.log(fmt(header));
console.log(widths.map((w) => '─'.repeat(w)).join('  '));
for (const r of rows) console.log(fmt(r));

const leaked = vendor.log.some((r) => JSON.stringify(r.headers).includes(PLACEHOLDER));
const stamped = vendor.log.every((r) => r.headers.authorization === `token ${REAL_TOKEN}`);
console.log(`\nvendor received ${vendor.log.length} requests; real credential on every one: ${stamped}; placeholder forwarded: ${leaked}`);
await broker.close();
await vendor.close();
rmSync(work, { recursive: true, force: true });
if (leaked || !stamped) process.exitCode = 1;
