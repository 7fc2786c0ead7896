/**
 * End to end: real curl, with the environment buildChildEnv makes, through the
 * broker to a local upstream that records headers. The right credential on bound hosts,
 * none on others, the placeholder never forwarded, a scoped token minted once for ten
 * concurrent requests, the bootstrap answer never reaching upstream — and no secret in any
 * log line or audit event of this file.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import type { AuditEvent } from '../../src/broker/types.js';
import {
  type Connection,
  PLACEHOLDER_SECRET,
  PLACEHOLDER_TOKEN,
  buildChildEnv,
  prepareCredentials,
} from '../../src/credentials/index.js';
import type { CliManifest } from '../../src/manifest/index.js';
import { startUpstream } from '../helpers/upstream.js';
import { atlassianExtension, azExtension, ghExtension } from '../manifest/fixtures.js';
import { TENANT, TOKEN_PATH, startOAuthServer } from './oauth-server.js';

const SIGN_IN = 'login.microsoftonline.com';
const APP_SECRET = 'e2e-app-secret-do-not-leak-7781';
const BASIC = { username: 'bot@acme.example', password: 'e2e-basic-password-do-not-leak-5521' };
const GH_KEY = 'e2e-ghe-key-do-not-leak-3390';

const upstream = await startUpstream([
  SIGN_IN,
  'management.azure.com',
  'graph.microsoft.com',
  'acme.atlassian.net',
  'api.media.atlassian.com',
  'ghe.example.com',
  'api.github.com',
]);
const oauth = await startOAuthServer(APP_SECRET, SIGN_IN);
oauth.respond((req, n) =>
  req.form.get('client_secret') === APP_SECRET
    ? // 300 ms keeps the mint in flight while all ten requests arrive
      {
        status: 200,
        body: {
          token_type: 'Bearer',
          expires_in: 3599,
          access_token: `minted-${n}-for-${req.form.get('scope')}`,
        },
        delayMs: 300,
      }
    : { status: 401, body: { error: 'invalid_client' } },
);
const logLines: string[] = [];
const events: AuditEvent[] = [];
const broker = await createBroker({
  upstream: { ca: upstream.pki.caPem, resolve: upstream.resolve, allowAddresses: ['127.0.0.0/8'] },
  logger: pino({ level: 'trace' }, { write: (s: string) => void logLines.push(s) }),
  onAudit: (e) => events.push(e),
});
const work = mkdtempSync(join(tmpdir(), 'clibroker-e2e-stamp-'));
t.teardown(async () => {
  await broker.close();
  await upstream.close();
  await oauth.close();
  rmSync(work, { recursive: true, force: true });
});

let calls = 0;
/** Runs /usr/bin/curl as a child would run: env from buildChildEnv only, fresh HOME and TMPDIR. */
function runCurl(
  session: { proxyUrl: string; caCertPem: string },
  cli: CliManifest,
  args: string[],
  endpointHost?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const dir = join(work, `call-${++calls}`);
  mkdirSync(join(dir, 'home'), { recursive: true });
  mkdirSync(join(dir, 'tmp'));
  writeFileSync(join(dir, 'ca.pem'), session.caCertPem);
  const env = buildChildEnv({
    cli,
    proxyUrl: session.proxyUrl,
    caFile: join(dir, 'ca.pem'),
    home: join(dir, 'home'),
    tmpdir: join(dir, 'tmp'),
    ...(endpointHost ? { endpointHost } : {}),
  });
  return new Promise((resolve) => {
    execFile(
      '/usr/bin/curl',
      ['--silent', '--show-error', '--http1.1', '--max-time', '20', ...args],
      { env, encoding: 'utf8' },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
const received = (host: string, pathPrefix = '/') =>
  upstream.received.filter((r) => r.host.split(':')[0] === host && r.url.startsWith(pathPrefix));

t.test(
  'az-like: bootstrap answered locally, discovery unauthenticated, scoped tokens minted once',
  async (t) => {
    const connection: Connection = {
      kind: 'oauth_client_credentials',
      clientId: '11111111-2222-3333-4444-555555555555',
      clientSecret: APP_SECRET,
      tenantId: TENANT,
      tokenUrl: oauth.url(),
    };
    const prepared = prepareCredentials({
      extension: azExtension(),
      cliId: 'az',
      connection,
      mint: { dispatcher: oauth.dispatcher() },
    });
    const session = broker.openSession({ egress: prepared.egress, credentials: prepared.stamper });
    t.teardown(() => session.close());
    const cli = prepared.plan.cli;

    // What `az login --service-principal -p {dummy}` sends to the token endpoint.
    const login = await runCurl(session, cli, [
      '-X',
      'POST',
      `https://${SIGN_IN}${TOKEN_PATH}`,
      '--data',
      `client_id=${connection.clientId}&grant_type=client_credentials&client_secret=${PLACEHOLDER_SECRET}&scope=https://management.core.windows.net//.default`,
    ]);
    t.equal(login.code, 0, login.stderr);
    const answer = JSON.parse(login.stdout) as {
      token_type: string;
      access_token: string;
      expires_in: number;
    };
    t.match(answer, { token_type: 'Bearer', expires_in: 3599 });
    t.equal(received(SIGN_IN, TOKEN_PATH).length, 0, 'the bootstrap request never reached upstream');
    t.equal(oauth.requests.length, 0, 'nor the real token endpoint');

    const disco = await runCurl(session, cli, [
      '-H',
      `Authorization: Bearer ${answer.access_token}`,
      `https://${SIGN_IN}/${TENANT}/v2.0/.well-known/openid-configuration`,
    ]);
    t.equal(disco.code, 0, disco.stderr);
    const seenDisco = received(SIGN_IN, `/${TENANT}/v2.0/.well-known`);
    t.equal(seenDisco.length, 1, 'discovery passed through');
    t.equal(seenDisco[0]?.headers.authorization, undefined, 'without any credential');

    // Anything else on the sign-in host is refused locally, as OAuth JSON, and audited as blocked.
    const other = await runCurl(session, cli, [
      '-X',
      'POST',
      '--data',
      'x=1',
      `https://${SIGN_IN}/${TENANT}/oauth2/v2.0/devicecode`,
    ]);
    t.match(JSON.parse(other.stdout), { error: 'access_denied' });
    t.equal(received(SIGN_IN, `/${TENANT}/oauth2/v2.0/devicecode`).length, 0, 'never forwarded');
    t.match(events.at(-1), {
      type: 'egress.blocked',
      host: SIGN_IN,
      policyCode: 'CLI_EGRESS_HOST_DENIED',
      refusalStatus: 403,
    });

    // Ten concurrent ARM requests, each carrying the placeholder token az got at login.
    const arm = Array.from(
      { length: 10 },
      (_, i) => `https://management.azure.com/subscriptions?api-version=2019-11-01&i=${i}`,
    );
    const ten = await runCurl(session, cli, [
      '--parallel',
      '--parallel-immediate',
      '--parallel-max',
      '10',
      '-H',
      `Authorization: Bearer ${answer.access_token}`,
      ...arm,
    ]);
    t.equal(ten.code, 0, ten.stderr);
    const armSeen = received('management.azure.com');
    t.equal(armSeen.length, 10);
    t.same(
      new Set(armSeen.map((r) => r.headers.authorization)),
      new Set(['Bearer minted-1-for-https://management.azure.com/.default']),
    );
    t.equal(
      oauth.requests.filter((r) => r.form.get('scope') === 'https://management.azure.com/.default').length,
      1,
      'minted once for ten requests',
    );

    const graph = await runCurl(session, cli, [
      '-H',
      `Authorization: Bearer ${answer.access_token}`,
      'https://graph.microsoft.com/v1.0/me',
    ]);
    t.equal(graph.code, 0, graph.stderr);
    t.equal(
      received('graph.microsoft.com')[0]?.headers.authorization,
      'Bearer minted-2-for-https://graph.microsoft.com/.default',
      'graph gets its own scope',
    );
    t.equal(oauth.requests.length, 2);

    const everything = JSON.stringify(upstream.received.map((r) => r.rawHeaders));
    t.notOk(everything.includes(answer.access_token), 'the placeholder token was never forwarded');
    t.notOk(everything.includes(PLACEHOLDER_SECRET), 'nor the placeholder secret');
    await prepared.close();
  },
);

t.test('curl against an Atlassian-like egress list: Basic on the bound host only', async (t) => {
  const prepared = prepareCredentials({
    extension: atlassianExtension(),
    cliId: 'curl',
    connection: { kind: 'basic', ...BASIC },
  });
  const session = broker.openSession({ egress: prepared.egress, credentials: prepared.stamper });
  t.teardown(() => session.close());
  const placeholder = ['-H', `Authorization: Bearer ${PLACEHOLDER_TOKEN}`];
  const a = await runCurl(session, prepared.plan.cli, [
    ...placeholder,
    'https://acme.atlassian.net/rest/api/3/myself',
  ]);
  const b = await runCurl(session, prepared.plan.cli, [
    ...placeholder,
    'https://api.media.atlassian.com/file/1',
  ]);
  t.equal(a.code + b.code, 0, a.stderr + b.stderr);
  t.equal(
    received('acme.atlassian.net')[0]?.headers.authorization,
    `Basic ${Buffer.from(`${BASIC.username}:${BASIC.password}`).toString('base64')}`,
  );
  const media = received('api.media.atlassian.com')[0];
  t.ok(media, 'the unbound host was reached');
  t.equal(media?.headers.authorization, undefined, 'with no credential, and not the placeholder');
});

t.test('gh-like on GHE: `token` scheme on the organization endpoint, nothing on github.com', async (t) => {
  const prepared = prepareCredentials({
    extension: ghExtension(),
    cliId: 'gh',
    connection: { kind: 'api_key', apiKey: GH_KEY },
    endpoint: 'https://ghe.example.com',
  });
  const session = broker.openSession({ egress: prepared.egress, credentials: prepared.stamper });
  t.teardown(() => session.close());
  const cli = prepared.plan.cli;
  const sends = ['-H', `Authorization: token ${PLACEHOLDER_TOKEN}`];
  const a = await runCurl(session, cli, [...sends, 'https://ghe.example.com/api/v3/user'], 'ghe.example.com');
  const b = await runCurl(session, cli, [...sends, 'https://api.github.com/user'], 'ghe.example.com');
  t.equal(a.code + b.code, 0, a.stderr + b.stderr);
  t.equal(received('ghe.example.com')[0]?.headers.authorization, `token ${GH_KEY}`);
  t.equal(received('api.github.com')[0]?.headers.authorization, undefined);
});

t.test(
  'gh-like on GHE with a hosts-only entry for the public API host: the key goes on the endpoint, never on api.github.com',
  async (t) => {
    const extension = ghExtension();
    extension.clis[0]!.credentialHosts = [{ hosts: ['api.github.com'] }];
    const prepared = prepareCredentials({
      extension,
      cliId: 'gh',
      connection: { kind: 'api_key', apiKey: GH_KEY },
      endpoint: 'https://ghe.example.com',
    });
    const session = broker.openSession({ egress: prepared.egress, credentials: prepared.stamper });
    t.teardown(() => session.close());
    const cli = prepared.plan.cli;
    const before = { ghe: received('ghe.example.com').length, pub: received('api.github.com').length };
    const sends = ['-H', `Authorization: token ${PLACEHOLDER_TOKEN}`];
    const a = await runCurl(
      session,
      cli,
      [...sends, 'https://ghe.example.com/api/v3/repos/acme/app'],
      'ghe.example.com',
    );
    const b = await runCurl(
      session,
      cli,
      [...sends, 'https://api.github.com/repos/acme/app'],
      'ghe.example.com',
    );
    t.equal(a.code + b.code, 0, a.stderr + b.stderr);
    const ghe = received('ghe.example.com').slice(before.ghe);
    const pub = received('api.github.com').slice(before.pub);
    t.equal(ghe.length, 1);
    t.equal(ghe[0]?.headers.authorization, `token ${GH_KEY}`, 'the real key on the endpoint');
    t.equal(pub.length, 1, 'the public host was reached');
    t.equal(pub[0]?.headers.authorization, undefined, 'with no credential, and not the placeholder');
    t.notOk(JSON.stringify(pub[0]?.rawHeaders).includes(GH_KEY));
  },
);

t.test('no secret in any log line or audit event of this file', async (t) => {
  const minted = oauth.requests.map((_r, i) => `minted-${i + 1}`);
  const secrets = [
    APP_SECRET,
    BASIC.password,
    Buffer.from(`${BASIC.username}:${BASIC.password}`).toString('base64'),
    GH_KEY,
    ...minted,
  ];
  const haystack = logLines.join('\n') + JSON.stringify(events);
  t.ok(
    events.length >= 16 && logLines.length >= 16,
    `captured ${events.length} events, ${logLines.length} log lines`,
  );
  for (const s of secrets) t.notOk(haystack.includes(s), `never logged: ${s.slice(0, 8)}…`);
  t.ok(
    events.some((e) => e.host === SIGN_IN && e.reason.includes('bootstrap')),
    'the bootstrap answer is audited',
  );
});
