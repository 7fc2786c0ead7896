/** Binding, stamping schemes, bootstrap answers and preamble placeholders. */
import t from 'tap';
import type { RequestHead } from '../../src/broker/types.js';
import {
  type Connection,
  PLACEHOLDER_SECRET,
  planCredentials,
  prepareCredentials,
  staticAuthorization,
} from '../../src/credentials/index.js';
import { atlassianExtension, azExtension, ghExtension, thrown } from '../manifest/fixtures.js';

const apiKey: Connection = { kind: 'api_key', apiKey: 'k-123' };
const app: Connection = {
  kind: 'oauth_client_credentials',
  clientId: '11111111-2222-3333-4444-555555555555',
  clientSecret: 'app-secret',
  tenantId: 'tenant-1',
  tokenUrl: 'https://login.microsoftonline.com/tenant-1/oauth2/v2.0/token',
};
const head = (method: string, host: string, target: string): RequestHead => ({
  method,
  host,
  target,
  headers: {},
});

t.test('binding table', async (t) => {
  const rows: Record<string, { plan: () => ReturnType<typeof planCredentials>; want: unknown }> = {
    'hosts-only entry → the connection on exactly those hosts': {
      plan: () => planCredentials({ extension: atlassianExtension(), cliId: 'curl', connection: apiKey }),
      want: [{ hosts: ['acme.atlassian.net'], credential: 'connection' }],
    },
    'hosts+scopes entries → a minted token per entry': {
      plan: () => planCredentials({ extension: azExtension(), cliId: 'az', connection: app }),
      want: [
        {
          hosts: ['management.azure.com'],
          credential: 'minted',
          scopes: ['https://management.azure.com/.default'],
        },
        {
          hosts: ['graph.microsoft.com'],
          credential: 'minted',
          scopes: ['https://graph.microsoft.com/.default'],
        },
      ],
    },
    'no credentialHosts + organization endpoint → the endpoint only': {
      plan: () =>
        planCredentials({
          extension: ghExtension(),
          cliId: 'gh',
          connection: apiKey,
          endpoint: 'https://ghe.example.com',
        }),
      want: [{ hosts: ['ghe.example.com'], credential: 'connection' }],
    },
    'no credentialHosts, no endpoint, one egress host → that host': {
      plan: () => {
        const ext = ghExtension();
        ext.egress = ['api.github.com'];
        return planCredentials({ extension: ext, cliId: 'gh', connection: apiKey });
      },
      want: [{ hosts: ['api.github.com'], credential: 'connection' }],
    },
  };
  for (const [name, r] of Object.entries(rows)) t.same(r.plan().bindings, r.want, name);
  const ghe = planCredentials({
    extension: ghExtension(),
    cliId: 'gh',
    connection: apiKey,
    endpoint: 'ghe.example.com',
  });
  t.same(
    ghe.egress,
    ['api.github.com', 'uploads.github.com', 'ghe.example.com'],
    'the endpoint joins egress',
  );
});

/** gh with its public API host named in credentialHosts, as a manifest for github.com would write it. */
function ghWithHosts(
  entries: NonNullable<ReturnType<typeof ghExtension>['clis'][number]['credentialHosts']>,
) {
  const ext = ghExtension();
  ext.clis[0]!.credentialHosts = entries;
  return ext;
}

t.test('an organization endpoint replaces the public host, for hosts-only entries too', async (t) => {
  const endpoint = 'https://ghe.example.com';
  const rows: Record<
    string,
    { ext: () => ReturnType<typeof ghExtension>; connection?: Connection; want: unknown }
  > = {
    'one hosts-only entry → the endpoint only': {
      ext: () => ghWithHosts([{ hosts: ['api.github.com'] }]),
      want: [{ hosts: ['ghe.example.com'], credential: 'connection' }],
    },
    'a hosts-only entry with several public hosts → the endpoint only': {
      ext: () => ghWithHosts([{ hosts: ['api.github.com', 'uploads.github.com'] }]),
      want: [{ hosts: ['ghe.example.com'], credential: 'connection' }],
    },
    'two hosts-only entries → one endpoint binding': {
      ext: () => ghWithHosts([{ hosts: ['api.github.com'] }, { hosts: ['uploads.github.com'] }]),
      want: [{ hosts: ['ghe.example.com'], credential: 'connection' }],
    },
    'a hosts-only entry that already names the endpoint → still the endpoint only': {
      ext: () => {
        const ext = ghWithHosts([{ hosts: ['api.github.com', 'ghe.example.com'] }]);
        ext.egress.push('ghe.example.com');
        return ext;
      },
      want: [{ hosts: ['ghe.example.com'], credential: 'connection' }],
    },
    'a scoped entry keeps its hosts; the hosts-only one becomes the endpoint': {
      ext: () =>
        ghWithHosts([{ hosts: ['uploads.github.com'], scopes: ['repo'] }, { hosts: ['api.github.com'] }]),
      connection: app,
      want: [
        { hosts: ['uploads.github.com'], credential: 'minted', scopes: ['repo'] },
        { hosts: ['ghe.example.com'], credential: 'connection' },
      ],
    },
  };
  for (const [name, r] of Object.entries(rows)) {
    const plan = planCredentials({
      extension: r.ext(),
      cliId: 'gh',
      connection: r.connection ?? apiKey,
      endpoint,
    });
    t.same(plan.bindings, r.want, name);
    t.ok(plan.egress.includes('api.github.com'), `${name}: the public host stays reachable`);
  }
  const gh = prepareCredentials({
    extension: ghWithHosts([{ hosts: ['api.github.com'] }]),
    cliId: 'gh',
    connection: apiKey,
    endpoint,
  });
  t.equal(await gh.stamper.authorizationFor('ghe.example.com'), 'token k-123', 'stamped on the endpoint');
  t.equal(await gh.stamper.authorizationFor('api.github.com'), undefined, 'never on the public host');
  const noEndpoint = planCredentials({
    extension: ghWithHosts([{ hosts: ['api.github.com'] }]),
    cliId: 'gh',
    connection: apiKey,
  });
  t.same(
    noEndpoint.bindings,
    [{ hosts: ['api.github.com'], credential: 'connection' }],
    'without an endpoint the entry stands',
  );
});

t.test('prepare-time failures', async (t) => {
  const fails: Record<string, [() => unknown, string]> = {
    'several egress hosts and nothing says which': [
      () => planCredentials({ extension: ghExtension(), cliId: 'gh', connection: apiKey }),
      'TOOL_VENDOR_CLI_CREDENTIAL_HOSTS_REQUIRED',
    ],
    'scopes with a token connection': [
      () => planCredentials({ extension: azExtension(), cliId: 'az', connection: apiKey }),
      'IDENTITY_NOT_CONFIGURED',
    ],
    'undeclared CLI id': [
      () => planCredentials({ extension: azExtension(), cliId: 'gcloud', connection: app }),
      'TOOL_VENDOR_CLI_NOT_DECLARED',
    ],
    'no host to bind at all': [
      () => {
        const ext = ghExtension();
        ext.egress = [];
        return planCredentials({ extension: ext, cliId: 'gh', connection: apiKey });
      },
      'TOOL_VENDOR_CLI_CREDENTIAL_UNBOUND',
    ],
    'endpoint that is not a DNS name': [
      () =>
        planCredentials({
          extension: ghExtension(),
          cliId: 'gh',
          connection: apiKey,
          endpoint: 'https://10.0.0.1:8443',
        }),
      'INVALID_TOOL_INPUT',
    ],
    'bootstrap token URL off port 443': [
      () =>
        planCredentials({
          extension: azExtension(),
          cliId: 'az',
          connection: { ...app, tokenUrl: 'https://login.example.com:8443/t' } as Connection,
        }),
      'INVALID_TOOL_INPUT',
    ],
    // URL parsers disagree on these (WHATWG reads a backslash as a slash and decodes %2e in a
    // host; RFC 3986 parsers read `evil.example\@ghe…` as userinfo and host ghe…): a
    // validator upstream of clibroker could approve one host while the credential went to another.
    ...Object.fromEntries(
      [
        'https://evil.example\\@ghe.acme.example',
        'https://ghe.acme.example%2eevil.com',
        'https://ghe.acme.ex\tample',
        'https://ghe.acme.example\\.evil.com',
        'https:ghe.acme.example',
        'https:/\\ghe.acme.example',
        ' https://ghe.acme.example',
      ].map((endpoint) => [
        `an endpoint URL that parsers read differently: ${JSON.stringify(endpoint)}`,
        [
          () => planCredentials({ extension: ghExtension(), cliId: 'gh', connection: apiKey, endpoint }),
          'INVALID_TOOL_INPUT',
        ],
      ]),
    ),
    ...Object.fromEntries(
      [
        'https://evil.example\\@login.example.com/t',
        'https://login.example.com%2eevil.com/t',
        'https://login.example.com\\.evil.com/t',
      ].map((tokenUrl) => [
        `a token URL that parsers read differently: ${JSON.stringify(tokenUrl)}`,
        [
          () =>
            planCredentials({
              extension: atlassianExtension(),
              cliId: 'curl',
              connection: { ...app, tokenUrl } as Connection,
            }),
          'INVALID_TOOL_INPUT',
        ],
      ]),
    ),
    // Minting sends the client secret to the token URL, bootstrap or not.
    'a plain-HTTP token URL for minting': [
      () =>
        planCredentials({
          extension: atlassianExtension(),
          cliId: 'curl',
          connection: { ...app, tokenUrl: 'http://login.example.com/t' } as Connection,
        }),
      'INVALID_TOOL_INPUT',
    ],
    'a token URL with userinfo for minting': [
      () =>
        planCredentials({
          extension: atlassianExtension(),
          cliId: 'curl',
          connection: { ...app, tokenUrl: 'https://u:app-secret@login.example.com/t' } as Connection,
        }),
      'INVALID_TOOL_INPUT',
    ],
  };
  for (const [name, [fn, code]] of Object.entries(fails)) {
    let e: ReturnType<typeof thrown>;
    try {
      e = thrown(fn);
    } catch {
      t.fail(`${name}: accepted`);
      continue;
    }
    t.equal(e.code, code, name);
    t.notOk(JSON.stringify([e.message, e.details]).includes('app-secret'), `${name}: no secret`);
  }
});

t.test('stamping schemes', async (t) => {
  t.equal(staticAuthorization(apiKey), 'Bearer k-123');
  t.equal(staticAuthorization(apiKey, 'token'), 'token k-123');
  t.equal(
    staticAuthorization({ kind: 'bot_token', token: 'xb' }, 'basic'),
    `Basic ${Buffer.from('xb:').toString('base64')}`,
  );
  t.equal(
    staticAuthorization({ kind: 'basic', username: 'me@acme.com', password: 'pw' }, 'token'),
    `Basic ${Buffer.from('me@acme.com:pw').toString('base64')}`,
    'basic is always Basic',
  );
  t.equal(staticAuthorization({ kind: 'oauth_access_token', accessToken: 'at' }), 'Bearer at');
  const gh = prepareCredentials({
    extension: ghExtension(),
    cliId: 'gh',
    connection: apiKey,
    endpoint: 'ghe.example.com',
  });
  t.equal(
    await gh.stamper.authorizationFor('ghe.example.com'),
    'token k-123',
    'gh: token scheme on the endpoint',
  );
  t.equal(await gh.stamper.authorizationFor('api.github.com'), undefined, 'nothing on unbound hosts');
  const atl = prepareCredentials({ extension: atlassianExtension(), cliId: 'curl', connection: apiKey });
  t.equal(await atl.stamper.authorizationFor('api.media.atlassian.com'), undefined);
  t.equal(atl.stamper.intercept, undefined, 'no bootstrap, no intercept');
});

t.test('bootstrap: token URL answered, discovery passes, the rest of the sign-in host refused', async (t) => {
  const p = prepareCredentials({ extension: azExtension(), cliId: 'az', connection: app });
  t.teardown(() => p.close());
  const s = p.stamper;
  t.same(s.extraHosts, ['login.microsoftonline.com']);
  const tok = s.intercept!(head('POST', 'login.microsoftonline.com', '/tenant-1/oauth2/v2.0/token'));
  t.equal(tok?.status, 200);
  const body = JSON.parse(String(tok!.body)) as Record<string, unknown>;
  t.match(body, {
    token_type: 'Bearer',
    expires_in: 3599,
    access_token: /^clibroker-placeholder-[0-9a-f]{24}$/,
  });
  for (const target of [
    '/tenant-1/v2.0/.well-known/openid-configuration',
    '/common/discovery/instance?api-version=1.1&authorization_endpoint=x',
  ]) {
    t.equal(
      s.intercept!(head('GET', 'login.microsoftonline.com', target)),
      undefined,
      `discovery passes: ${target}`,
    );
  }
  t.equal(
    await s.authorizationFor('login.microsoftonline.com'),
    undefined,
    'discovery goes without credentials',
  );
  for (const [m, target] of [
    ['POST', '/tenant-1/oauth2/v2.0/devicecode'],
    ['GET', '/tenant-1/oauth2/v2.0/token'],
    ['GET', '/x/../tenant-1/v2.0/.well-known/openid-configuration'],
    ['GET', '/tenant-1%2f..%2fother/.well-known/openid-configuration'],
  ] as const) {
    const r = s.intercept!(head(m, 'login.microsoftonline.com', target));
    t.equal(r?.status, 403, `${m} ${target} refused`);
    t.match(JSON.parse(String(r!.body)), {
      error: 'access_denied',
      error_description: /CLI_EGRESS_HOST_DENIED/,
    });
  }
  t.equal(
    s.intercept!(head('POST', 'management.azure.com', '/tenant-1/oauth2/v2.0/token')),
    undefined,
    'other hosts untouched',
  );
  t.same(p.preamble, [
    'login',
    '--service-principal',
    '-u',
    app.clientId,
    '-p',
    PLACEHOLDER_SECRET,
    '--tenant',
    'tenant-1',
    '--allow-no-subscriptions',
  ]);
  t.notOk(JSON.stringify(p.preamble).includes('app-secret'), 'the preamble never carries the real secret');
});

t.test('preamble placeholders need the identity fields', async (t) => {
  const { tenantId: _omit, ...noTenant } = app as Extract<Connection, { kind: 'oauth_client_credentials' }>;
  const e = thrown(() => prepareCredentials({ extension: azExtension(), cliId: 'az', connection: noTenant }));
  t.equal(e.code, 'IDENTITY_NOT_CONFIGURED');
  t.match(e.details, { missing: 'tenantId' });
});

t.test('an application identity on a hosts-only entry mints with the connection scopes', async (t) => {
  const { createCredentialStamper } = await import('../../src/credentials/index.js');
  const asked: string[][] = [];
  const fakeMinter = {
    token: async (s: readonly string[]) => {
      asked.push([...s]);
      return 'minted';
    },
  } as unknown as import('../../src/credentials/index.js').TokenMinter;
  const conn = { ...app, scopes: ['api://acme/.default'] } as Connection;
  const plan = planCredentials({ extension: atlassianExtension(), cliId: 'curl', connection: conn });
  const s = createCredentialStamper(plan, conn, fakeMinter);
  t.equal(await s.authorizationFor('acme.atlassian.net'), 'Bearer minted');
  t.equal(await s.authorizationFor('api.media.atlassian.com'), undefined);
  t.same(asked, [['api://acme/.default']]);
});

t.test('an empty scope list is never read as anything', async (t) => {
  // a manifest that skipped defineExtension: refused with the manifest's own reason
  const ext = atlassianExtension();
  ext.clis[0]!.credentialHosts = [{ hosts: ['acme.atlassian.net'], scopes: [] }];
  for (const connection of [apiKey, app]) {
    const e = thrown(() => planCredentials({ extension: ext, cliId: 'curl', connection }));
    t.equal(
      e.code,
      'MANIFEST_INVALID',
      `${connection.kind}: refused, not bound as the connection's own credential`,
    );
    t.match(e.details, {
      problems: [
        { code: 'MANIFEST_CREDENTIAL_HOSTS_SCOPES_EMPTY', path: 'clis[0].credentialHosts[0].scopes' },
      ],
    });
  }
  const bad: Record<string, unknown> = {
    'an empty list': [],
    'a scope with a space': ['a b'],
    'an empty scope': [''],
    'not an array': 'a',
  };
  for (const [name, scopes] of Object.entries(bad)) {
    const e = thrown(() =>
      planCredentials({
        extension: atlassianExtension(),
        cliId: 'curl',
        connection: { ...app, scopes } as Connection,
      }),
    );
    t.equal(e.code, 'INVALID_TOOL_INPUT', `connection.scopes: ${name}`);
    t.match(e.details, { field: 'connection.scopes' });
    t.notOk(JSON.stringify([e.message, e.details]).includes('app-secret'), `${name}: no secret`);
  }
  t.doesNotThrow(() =>
    planCredentials({
      extension: atlassianExtension(),
      cliId: 'curl',
      connection: { ...app, scopes: ['api://acme/.default'] } as Connection,
    }),
  );
  t.doesNotThrow(
    () => planCredentials({ extension: atlassianExtension(), cliId: 'curl', connection: app }),
    'no scopes field: mint with no scope parameter',
  );
});
