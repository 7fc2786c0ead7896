/**
 * The shape of a refusal's body comes from the credentials, which alone know their token
 * endpoint: a refusal there is OAuth JSON (MSAL and az crash on anything else), every other
 * refusal the broker's own JSON, whatever the request looks like. Real tunnels, a real
 * session; the second half checks the credential module's own answer.
 */
import t from 'tap';
import type { RequestHead } from '../../src/broker/types.js';
import { type Connection, prepareCredentials } from '../../src/credentials/index.js';
import { brokerFixture, exchange, openTunnel, until } from '../helpers/broker.js';
import { atlassianExtension, azExtension } from '../manifest/fixtures.js';

const HOST = 'login.example.com';
const TOKEN_PATH = '/tenant-1/oauth2/v2.0/token';
const FORM = 'client_id=x&grant_type=client_credentials';

const post = (path: string): string =>
  `POST ${path} HTTP/1.1\r\nHost: ${HOST}\r\ncontent-type: application/x-www-form-urlencoded\r\n` +
  `content-length: ${FORM.length}\r\n\r\n${FORM}`;

/** The JSON body of one answer. */
function bodyOf(out: string): Record<string, unknown> {
  return JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
}

t.test('a refusal is OAuth JSON exactly where the credentials say, the broker’s own elsewhere', async (t) => {
  const f = await brokerFixture(t, { hosts: [HOST] });
  const s = f.session({
    tier: 'read',
    credentials: {
      authorizationFor: () => undefined,
      refusalShape: (head: RequestHead) =>
        head.method === 'POST' && head.target === TOKEN_PATH ? 'oauth' : 'broker',
    },
  });
  const cases: Record<string, [string, 'oauth' | 'broker']> = {
    'the token endpoint (a POST, refused by the tier)': [TOKEN_PATH, 'oauth'],
    // a form POST to …/token the credentials do not own: no guess from its looks
    'another path that ends in /token': ['/other/oauth2/token', 'broker'],
  };
  t.plan(Object.keys(cases).length * 3 + 1);
  for (const [name, [path, shape]] of Object.entries(cases)) {
    const tls = await openTunnel(s, f.broker.port, HOST);
    const out = await exchange(tls, post(path), (o) => o.endsWith('}'));
    tls.destroy();
    t.match(out, /^HTTP\/1\.1 422 /, `${name}: refused by the tier`);
    const body = bodyOf(out);
    if (shape === 'oauth') {
      t.match(body, { error: 'access_denied', error_codes: ['CLI_REQUEST_TIER_DENIED'] }, name);
      t.notOk('message' in body, `${name}: nothing but OAuth's fields`);
    } else {
      t.match(body, { error: { code: 'POLICY_BLOCKED', policyCode: 'CLI_REQUEST_TIER_DENIED' } }, name);
      t.type(body.message, 'string', `${name}: the broker's own shape`);
    }
  }
  t.ok(await until(() => f.events.length === 2), 'each refusal audited once');
});

t.test('a credentials hook that throws leaves the broker’s shape, and the refusal is answered', async (t) => {
  const f = await brokerFixture(t, { hosts: [HOST] });
  const s = f.session({
    tier: 'read',
    credentials: {
      authorizationFor: () => undefined,
      refusalShape: () => {
        throw new Error('the hook broke');
      },
    },
  });
  const tls = await openTunnel(s, f.broker.port, HOST);
  const out = await exchange(tls, post(TOKEN_PATH), (o) => o.endsWith('}'));
  tls.destroy();
  t.match(out, /^HTTP\/1\.1 422 /);
  t.match(bodyOf(out), { error: { policyCode: 'CLI_REQUEST_TIER_DENIED' } });
  t.ok(await until(() => f.events.length === 1));
  t.equal(f.events[0]?.type, 'egress.blocked');
});

t.test('the credential module owns the shape: its connection’s token URL, nothing else', async (t) => {
  const app: Connection = {
    kind: 'oauth_client_credentials',
    clientId: '11111111-2222-3333-4444-555555555555',
    clientSecret: 'app-secret',
    tenantId: 'tenant-1',
    tokenUrl: 'https://login.microsoftonline.com/tenant-1/oauth2/v2.0/token',
  };
  const p = prepareCredentials({ extension: azExtension(), cliId: 'az', connection: app });
  t.teardown(() => p.close());
  const shape = p.stamper.refusalShape;
  const head = (method: string, host: string, target: string): RequestHead => ({
    method,
    host,
    target,
    headers: {},
  });
  t.equal(shape?.(head('POST', 'login.microsoftonline.com', '/tenant-1/oauth2/v2.0/token')), 'oauth');
  t.equal(
    shape?.(head('POST', 'login.microsoftonline.com', '/tenant-1/oauth2/v2.0/token?x=1')),
    'oauth',
    'any query',
  );
  t.equal(
    shape?.(head('GET', 'login.microsoftonline.com', '/tenant-1/oauth2/v2.0/token')),
    'broker',
    'a GET',
  );
  t.equal(shape?.(head('POST', 'login.microsoftonline.com', '/tenant-2/oauth2/v2.0/token')), 'broker');
  t.equal(shape?.(head('POST', 'management.azure.com', '/tenant-1/oauth2/v2.0/token')), 'broker');
  const key = prepareCredentials({
    extension: atlassianExtension(),
    cliId: 'curl',
    connection: { kind: 'api_key', apiKey: 'k-123' },
  });
  t.equal(key.stamper.refusalShape, undefined, 'a connection without a token endpoint has no say');
});
