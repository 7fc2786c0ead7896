/**
 * GitHub App installation tokens over real HTTPS against the mock vendor: the app's JWT, the
 * exchange narrowed to the tier, the cache, GitHub Enterprise's API path, and the refusals
 * (a read set that writes, a grant wider than asked, a key that is not one), none of which
 * lets the key, the JWT or a token into an error.
 */
import { generateKeyPairSync, verify } from 'node:crypto';
import t from 'tap';
import { createUpstream } from '../../src/broker/upstream.js';
import { appJwt, InstallationTokens } from '../../src/credentials/github-app.js';
import { prepareCredentials } from '../../src/credentials/stamper.js';
import type { GithubAppConnection } from '../../src/credentials/types.js';
import type { VendorHandler } from '../../src/mockvendor/server.js';
import { routeToMock, startMockVendor, type TestVendor } from '../../src/testing/index.js';
import { githubExtension } from '../runs/fixtures.js';

async function vendorWith(
  t: { teardown(fn: () => unknown): void },
  handler?: VendorHandler,
  app: Parameters<typeof startMockVendor>[0] = { app: true },
) {
  const vendor: TestVendor = handler
    ? await startMockVendor({ shape: 'generic', handler })
    : await startMockVendor(app);
  const dispatcher = createUpstream(routeToMock(vendor));
  t.teardown(async () => {
    await dispatcher.close();
    await vendor.close();
  });
  return { vendor, dispatcher };
}

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const conn = (over: Partial<GithubAppConnection> = {}): GithubAppConnection => ({
  kind: 'github_app',
  appId: '1001',
  installationId: '2002',
  privateKey: PEM,
  ...over,
});

t.test("the app's JWT: RS256, issued 60 s in the past, expiring within 10 minutes", async (t) => {
  const now = 1_700_000_000;
  const jwt = appJwt('1001', privateKey, now);
  const [h, c, sig] = jwt.split('.') as [string, string, string];
  t.same(JSON.parse(Buffer.from(h, 'base64url').toString()), { alg: 'RS256', typ: 'JWT' });
  const claims = JSON.parse(Buffer.from(c, 'base64url').toString());
  t.equal(claims.iss, '1001');
  t.equal(claims.iat, now - 60);
  t.ok(claims.exp > now && claims.exp <= now + 600, 'expires within 10 minutes of now');
  t.ok(verify('sha256', Buffer.from(`${h}.${c}`), publicKey, Buffer.from(sig, 'base64url')), 'verifies');
});

t.test('concurrent callers share one exchange; tiers and repository sets mint their own', async (t) => {
  const { vendor, dispatcher } = await vendorWith(t);
  const app = vendor.connection as GithubAppConnection;
  const tokens = new InstallationTokens({ dispatcher });
  const api = 'https://api.github.com';
  const reads = await Promise.all(Array.from({ length: 5 }, () => tokens.token(app, 'read', api)));
  t.equal(tokens.mints, 1, 'five callers, one exchange');
  t.equal(new Set(reads.map((r) => r.accessToken)).size, 1);
  t.same(reads[0]!.grant.permissions, {
    contents: 'read',
    issues: 'read',
    pull_requests: 'read',
    metadata: 'read',
  });
  const write = await tokens.token(app, 'write', api);
  t.not(write.accessToken, reads[0]!.accessToken, 'write has its own token');
  await tokens.token({ ...app, repositories: ['app'] }, 'read', api);
  t.equal(tokens.mints, 3, 'a narrower repository set is another token');
  await tokens.token(app, 'read', api);
  await tokens.token(app, 'write', api);
  t.equal(tokens.mints, 3, 'then all served from the cache');
  const same = {
    ...app,
    permissions: { read: { metadata: 'read' as const }, write: { metadata: 'read' as const } },
  };
  await tokens.token(same, 'read', api);
  await tokens.token(same, 'write', api);
  t.equal(tokens.mints, 5, 'the tiers never share a token, even for one permission set');
});

t.test('expiry: refreshed a skew before GitHub expires the token', async (t) => {
  let now = 1_700_000_000_000;
  let n = 0;
  const { dispatcher } = await vendorWith(t, () => ({
    status: 201,
    body: {
      token: `ghs_ExpiryTestToken${++n}`,
      expires_at: new Date(now + 120_000).toISOString(),
      permissions: { metadata: 'read' },
    },
  }));
  const tokens = new InstallationTokens({ dispatcher, skewMs: 30_000, now: () => now });
  const set = { permissions: { read: { metadata: 'read' as const } } };
  const first = await tokens.token(conn(set), 'read', 'https://api.github.com');
  t.equal(first.accessToken, 'ghs_ExpiryTestToken1');
  now += 89_000;
  t.equal((await tokens.token(conn(set), 'read', 'https://api.github.com')).accessToken, first.accessToken);
  now += 2_000;
  t.equal(
    (await tokens.token(conn(set), 'read', 'https://api.github.com')).accessToken,
    'ghs_ExpiryTestToken2',
    '91 s after minting (120 − 30 skew = 90): minted again',
  );
  t.equal(tokens.mints, 2);
});

t.test('GitHub Enterprise: the exchange goes to the endpoint under /api/v3, the token onto it', async (t) => {
  const { vendor, dispatcher } = await vendorWith(t);
  const app = vendor.connection as GithubAppConnection;
  const prepared = prepareCredentials({
    extension: githubExtension,
    cliId: 'gh',
    connection: app,
    endpoint: 'ghe.acme.example',
    tier: 'write',
    mint: { dispatcher },
  });
  t.teardown(() => prepared.close());
  t.equal(prepared.stamper.authorizationFor('api.github.com'), undefined, 'the public host gets nothing');
  const auth = await prepared.stamper.authorizationFor('ghe.acme.example');
  const minted = vendor.installationTokens[0]!;
  t.equal(auth, `token ${minted.token}`);
  t.match(vendor.log[0], { host: 'ghe.acme.example', path: '/api/v3/app/installations/2002/access_tokens' });
  t.match(prepared.grant(), { kind: 'github_app', tier: 'write', permissions: { issues: 'write' } });
  t.notOk(JSON.stringify(prepared.grant()).includes(minted.token), 'the grant holds no token');
});

t.test('refusals name the field or the reason, never a secret', async (t) => {
  let jwt = '';
  const { dispatcher } = await vendorWith(t, (req) => {
    jwt = String(req.headers.authorization);
    // a token wider than asked: issues:write for a read call
    return {
      status: 201,
      body: {
        token: 'ghs_WiderThanAskedToken0000000000001',
        expires_at: new Date(Date.now() + 3600_000).toISOString(),
        permissions: { issues: 'write', metadata: 'read' },
      },
    };
  });
  const tokens = new InstallationTokens({ dispatcher });
  const wide = await tokens.token(conn(), 'read', 'https://api.github.com').catch((e: unknown) => e);
  t.match(wide, { code: 'CREDENTIAL_GITHUB_APP_TOKEN_FAILED', details: { reason: 'granted_too_much' } });
  t.match(String((wide as Error).message), /issues:write/);

  const badKey = await tokens
    .token(conn({ privateKey: 'not-a-key-MIIEvQIBADANBgkqhkiG9w0BAQ' }), 'read', 'https://api.github.com')
    .catch((e: unknown) => e);
  t.match(badKey, { code: 'CREDENTIAL_GITHUB_APP_TOKEN_FAILED', details: { reason: 'private_key_invalid' } });
  t.equal(tokens.mints, 1, 'nothing sent for a key that is not one');

  for (const e of [wide, badKey]) {
    const text = JSON.stringify({ m: (e as Error).message, d: (e as { details?: unknown }).details });
    t.notOk(
      text.includes('ghs_WiderThanAskedToken') || text.includes(jwt.slice(7)) || text.includes('MIIEvQ'),
    );
  }

  t.throws(
    () =>
      prepareCredentials({
        extension: githubExtension,
        cliId: 'gh',
        connection: conn({ permissions: { read: { issues: 'write' } } }),
      }),
    { code: 'INVALID_TOOL_INPUT', details: { field: 'connection.permissions.read' } },
    'a read set that writes is refused before anything runs',
  );
});

t.test(
  'a tier asking for more than the installation was granted: GitHub refuses, the call fails',
  async (t) => {
    const { vendor, dispatcher } = await vendorWith(t, undefined, {
      app: { granted: { issues: 'read', contents: 'read', pull_requests: 'read', metadata: 'read' } },
    });
    const app = vendor.connection as GithubAppConnection;
    const tokens = new InstallationTokens({ dispatcher });
    t.ok((await tokens.token(app, 'read', 'https://api.github.com')).accessToken, 'read is within the grant');
    const e = await tokens.token(app, 'write', 'https://api.github.com').catch((err: unknown) => err);
    t.match(e, {
      code: 'CREDENTIAL_GITHUB_APP_TOKEN_FAILED',
      details: { reason: 'provider_error', status: 422, tier: 'write', apiHost: 'api.github.com' },
    });
    t.match((e as Error).message, /api\.github\.com failed \(422 The permissions requested are not granted/);
    const jwt = String(vendor.log.at(-1)!.headers.authorization).slice(7);
    t.notOk(
      JSON.stringify({ m: (e as Error).message, d: (e as { details?: unknown }).details }).includes(jwt),
    );
    await tokens.token(app, 'write', 'https://api.github.com').catch(() => undefined);
    t.equal(tokens.mints, 3, 'a failed exchange is never cached');
  },
);
