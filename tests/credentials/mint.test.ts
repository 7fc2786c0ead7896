/** Token minting against a local OAuth token server over real HTTPS. */
import t from 'tap';
import { TokenMinter } from '../../src/credentials/mint.js';
import type { OAuthClientCredentialsConnection } from '../../src/credentials/types.js';
import { TENANT, TOKEN_PATH, startOAuthServer } from './oauth-server.js';

const SECRET = 'test-client-secret-value-0001';
const conn = (tokenUrl: string): OAuthClientCredentialsConnection => ({
  kind: 'oauth_client_credentials',
  clientId: '11111111-2222-3333-4444-555555555555',
  clientSecret: SECRET,
  tenantId: TENANT,
  tokenUrl,
});

t.test('client credentials: form body, scopes joined by a space, Bearer token back', async (t) => {
  const oauth = await startOAuthServer(SECRET);
  t.teardown(() => oauth.close());
  const minter = new TokenMinter(conn(oauth.url()), { dispatcher: oauth.dispatcher() });
  const token = await minter.token(['https://graph.microsoft.com/.default', 'offline_access']);
  t.equal(token, 'minted-1-https://graph.microsoft.com/.default offline_access');
  const r = oauth.requests[0]!;
  t.equal(r.path, TOKEN_PATH);
  t.equal(r.contentType, 'application/x-www-form-urlencoded');
  t.equal(r.form.get('grant_type'), 'client_credentials');
  t.equal(r.form.get('client_id'), '11111111-2222-3333-4444-555555555555');
  t.equal(r.form.get('scope'), 'https://graph.microsoft.com/.default offline_access');
});

t.test('ten concurrent callers → one mint; another scope set → its own mint; then cached', async (t) => {
  const oauth = await startOAuthServer(SECRET);
  t.teardown(() => oauth.close());
  const minter = new TokenMinter(conn(oauth.url()), { dispatcher: oauth.dispatcher() });
  const arm = ['https://management.azure.com/.default'];
  const tokens = await Promise.all(Array.from({ length: 10 }, () => minter.token(arm)));
  t.equal(oauth.requests.length, 1, 'one request for ten callers');
  t.equal(new Set(tokens).size, 1, 'all ten got the same token');
  await Promise.all([minter.token(['https://graph.microsoft.com/.default']), minter.token(arm)]);
  t.equal(oauth.requests.length, 2, 'graph minted once, arm served from cache');
  await minter.token([...arm, ...arm]);
  t.equal(oauth.requests.length, 2, 'repeated scopes are the same scope set');
});

t.test('expiry: the cached token is refreshed expires_in minus the skew after minting', async (t) => {
  const oauth = await startOAuthServer(SECRET);
  t.teardown(() => oauth.close());
  let now = 1_000_000;
  oauth.respond((_req, n) => ({
    status: 200,
    body: { token_type: 'Bearer', expires_in: 120, access_token: `tok-${n}` },
  }));
  const minter = new TokenMinter(conn(oauth.url()), {
    dispatcher: oauth.dispatcher(),
    skewMs: 30_000,
    now: () => now,
  });
  t.equal(await minter.token(['s']), 'tok-1');
  now += 89_000;
  t.equal(await minter.token(['s']), 'tok-1', 'still valid 89 s later (120 − 30 skew = 90)');
  now += 2_000;
  t.equal(await minter.token(['s']), 'tok-2', 'refreshed at 91 s');
  t.equal(oauth.requests.length, 2);
});

t.test(
  'provider errors map to CREDENTIAL_TOKEN_MINT_FAILED with error/error_description, never the secret',
  async (t) => {
    const oauth = await startOAuthServer(SECRET);
    t.teardown(() => oauth.close());
    const cases: Record<
      string,
      { status: number; body?: unknown; raw?: string; want: Record<string, unknown> }
    > = {
      'invalid_client (echoing the secret back)': {
        status: 401,
        body: {
          error: 'invalid_client',
          error_description: `AADSTS7000215: Invalid client secret provided: ${SECRET}`,
        },
        want: { reason: 'provider_error', status: 401, error: 'invalid_client' },
      },
      invalid_scope: {
        status: 400,
        body: {
          error: 'invalid_scope',
          error_description: 'AADSTS70011: The provided value for scope is not valid.',
        },
        want: {
          reason: 'provider_error',
          status: 400,
          error: 'invalid_scope',
          error_description: 'AADSTS70011: The provided value for scope is not valid.',
        },
      },
      'HTML error page': {
        status: 502,
        raw: '<html>bad gateway</html>',
        want: { reason: 'provider_error', status: 502 },
      },
      '200 without access_token': {
        status: 200,
        body: { token_type: 'Bearer' },
        want: { reason: 'invalid_response', status: 200 },
      },
    };
    for (const [name, c] of Object.entries(cases)) {
      oauth.respond(() => ({ status: c.status, body: c.body, ...(c.raw ? { raw: c.raw } : {}) }));
      const minter = new TokenMinter(conn(oauth.url()), { dispatcher: oauth.dispatcher() });
      const err = await minter.token(['s']).then(
        () => undefined,
        (e: unknown) =>
          e as { code: string; message: string; details: Record<string, unknown>; stack: string },
      );
      t.equal(err?.code, 'CREDENTIAL_TOKEN_MINT_FAILED', name);
      t.match(err?.details, { ...c.want, tokenHost: oauth.host }, `${name}: details`);
      const all = JSON.stringify({
        m: err?.message,
        d: err?.details,
        s: err?.stack,
        c: (err as { cause?: unknown })?.cause,
      });
      t.notOk(all.includes(SECRET), `${name}: the secret is nowhere in the error`);
    }
    const echoed = oauth.requests.length;
    t.equal(echoed, 4);
  },
);

t.test('a failed mint is not cached and is shared by its concurrent callers', async (t) => {
  const oauth = await startOAuthServer(SECRET);
  t.teardown(() => oauth.close());
  let fail = true;
  oauth.respond((_req, n) =>
    fail
      ? { status: 400, body: { error: 'temporarily_unavailable' }, delayMs: 30 }
      : { status: 200, body: { access_token: `ok-${n}`, expires_in: 3600 } },
  );
  const minter = new TokenMinter(conn(oauth.url()), { dispatcher: oauth.dispatcher() });
  const results = await Promise.allSettled(Array.from({ length: 5 }, () => minter.token(['s'])));
  t.ok(results.every((r) => r.status === 'rejected'));
  t.equal(oauth.requests.length, 1, 'five callers, one failing request');
  fail = false;
  t.equal(await minter.token(['s']), 'ok-2', 'the next call mints again');
});

t.test('unreachable token endpoint → network failure, no secret', async (t) => {
  const minter = new TokenMinter(conn('https://127.0.0.1:1/token'), { timeoutMs: 2000 });
  const err = (await minter.token(['s']).catch((e: unknown) => e)) as {
    code: string;
    details: Record<string, unknown>;
  };
  t.equal(err.code, 'CREDENTIAL_TOKEN_MINT_FAILED');
  t.equal(err.details.reason, 'network');
  t.notOk(JSON.stringify(err.details).includes(SECRET));
});

// The client secret travels in the form body: only TLS keeps it off the wire.
t.test('a token URL that is not https, or carries userinfo: refused before anything is sent', async (t) => {
  const { createServer } = await import('node:http');
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"access_token":"plain-http-token","expires_in":3600}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise((r) => server.close(r)));
  const port = (server.address() as { port: number }).port;
  for (const url of [
    `http://127.0.0.1:${port}/token`,
    `HTTP://127.0.0.1:${port}/token`,
    `https://user:pw@127.0.0.1:${port}/token`,
    'not a url',
  ]) {
    const minter = new TokenMinter(conn(url), { timeoutMs: 2000 });
    const err = (await minter.token(['s']).catch((e: unknown) => e)) as {
      code: string;
      details: Record<string, unknown>;
    };
    t.equal(err.code, 'CREDENTIAL_TOKEN_MINT_FAILED', url);
    t.equal(err.details?.reason, 'insecure_url', url);
    t.notOk(
      JSON.stringify(err).includes(SECRET) || JSON.stringify(err).includes(':pw@'),
      `${url}: no secret in the error`,
    );
  }
  t.same(seen, [], 'the plain-HTTP server never received the secret');
});
