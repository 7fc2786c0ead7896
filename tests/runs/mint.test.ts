/**
 * Token minting goes through the broker's own upstream routing by default: the host routes
 * the broker (resolve + CA) once and the runner's minters reach the token endpoint the same
 * way, with no second dispatcher. Real curl against the embedded Entra ID + ARM vendor.
 */
import { inspect } from 'node:util';
import t from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import { createUpstream } from '../../src/broker/upstream.js';
import type { Connection } from '../../src/credentials/types.js';
import { defineExtension } from '../../src/manifest/define.js';
import { azureVendor } from '../../src/mockvendor/azure.js';
import { startMockVendor } from '../../src/mockvendor/server.js';
import { createRunner, type RunnerOptions } from '../../src/runs/index.js';
import { openSqliteStore } from '../../src/store/index.js';
import { leakGuard } from '../helpers/leaks.js';

const TENANT = '72f988bf-0000-4000-8000-000000000002';
const CLIENT = '11111111-2222-3333-4444-555555555556';
const SECRET = 'AzMintClientSecret~kept.by.clibroker.0002';
const SUB = '00000000-1111-2222-3333-444444444445';

const extension = defineExtension({
  id: 'azure-curl',
  egress: ['management.azure.com'],
  toolkits: { azure: { credential: 'auth.default' } },
  clis: [
    {
      id: 'curl',
      binary: { image: 'plain', entrypoint: 'curl' },
      credentialHosts: [
        { hosts: ['management.azure.com'], scopes: ['https://management.azure.com/.default'] },
      ],
    },
  ],
});
const connection = (secret: string): Connection => ({
  kind: 'oauth_client_credentials',
  clientId: CLIENT,
  clientSecret: secret,
  tenantId: TENANT,
  tokenUrl: `https://login.microsoftonline.com/${TENANT}/oauth2/v2.0/token`,
});

async function fixture(
  t: { teardown(fn: () => unknown): void },
  runner: Omit<RunnerOptions, 'broker' | 'store'> = {},
) {
  const vendor = await startMockVendor(
    azureVendor({ tenantId: TENANT, clientId: CLIENT, clientSecret: SECRET, subscriptionId: SUB }),
  );
  const guard = leakGuard([SECRET, 'WrongSecret~0002']);
  const broker = await createBroker({
    upstream: { ca: vendor.caPem, resolve: vendor.resolve, allowAddresses: ['127.0.0.0/8'] },
    logger: guard.logger,
    onAudit: guard.onAudit,
  });
  const store = openSqliteStore(':memory:');
  t.teardown(async () => {
    await broker.close();
    await vendor.close();
    for (const e of await store.listEvents({ limit: 10_000 })) guard.onAudit(e.event as never);
    await store.close();
    guard.assertClean();
  });
  const run = (secret = SECRET) =>
    createRunner({ broker, store, logger: guard.logger, ...runner }).run({
      extension,
      cli: 'curl',
      args: [
        '-sS',
        `https://management.azure.com/subscriptions/${SUB}/resourcegroups?api-version=2022-09-01`,
      ],
      connection: connection(secret),
      tier: {
        requested: 'read',
        organizationCeiling: 'write',
        assignmentAllow: 'write',
        identity: 'assigned',
      },
      context: { kind: 'agent-step' },
      deadlineMs: 60_000,
    });
  return { vendor, broker, store, run };
}

t.test(
  'the client-credentials mint reaches the token endpoint through the broker, with no dispatcher of its own',
  async (t) => {
    const f = await fixture(t);
    const r = await f.run();
    t.match(r, { status: 'completed', exitCode: 0 }, r.stderr);
    t.same(
      JSON.parse(r.stdout).value.map((g: { name: string }) => g.name),
      ['rg1'],
    );
    const posts = f.vendor.log.filter((x) => x.method === 'POST' && x.path.endsWith('/oauth2/v2.0/token'));
    t.equal(posts.length, 1, 'one mint');
    t.equal(
      posts[0]!.host,
      'login.microsoftonline.com',
      'sent to the token endpoint by name (resolved by the broker)',
    );
    t.match(posts[0]!.body.toString(), /client_secret=AzMintClientSecret/);
    t.match(
      f.vendor.log.find((x) => x.host === 'management.azure.com')?.headers.authorization,
      /^Bearer arm-token-1-/,
      'ARM got the minted token',
    );
    t.notMatch(
      inspect(f.broker.dispatcher, { depth: 8 }),
      /AzMintClientSecret/,
      'the dispatcher keeps no secret after the mint',
    );
  },
);

t.test('a failed mint fails the call, although curl exits 0 on the 401', async (t) => {
  const f = await fixture(t);
  const r = await f.run('WrongSecret~0002');
  t.match(
    r,
    {
      status: 'refused',
      exitCode: 0,
      refusal: { code: 'CREDENTIAL_TOKEN_MINT_FAILED', host: 'management.azure.com' },
    },
    r.stderr,
  );
  t.equal(f.vendor.log.filter((x) => x.host === 'management.azure.com').length, 0, 'nothing reached ARM');
  const ev = await f.store.listEvents({ runId: r.runId, type: 'extension.execution.failed' });
  t.match(
    ev.map((e) => e.event),
    [{ code: 'CREDENTIAL_TOKEN_MINT_FAILED', cliTier: 'read' }],
  );
});

t.test("a host's own mint dispatcher still wins over the broker's", async (t) => {
  // Routes every host to a closed port: if the runner used it, the mint fails.
  const nowhere = createUpstream({ resolve: () => ({ host: '127.0.0.1', port: 1 }) });
  t.teardown(() => nowhere.close());
  const f = await fixture(t, { mint: { dispatcher: nowhere } });
  const r = await f.run();
  t.match(r, { status: 'refused', refusal: { code: 'CREDENTIAL_TOKEN_MINT_FAILED' } });
  t.equal(
    f.vendor.log.filter((x) => x.path.endsWith('/token')).length,
    0,
    'the token endpoint was never reached',
  );
});

// The client secret goes wherever the token URL points: a private address is refused as an
// egress name resolving there is, unless the operator allowed that range.
t.test(
  'a token endpoint on a loopback address is refused by the address rule, through the broker or a minter of its own',
  async (t) => {
    const az = azureVendor({ tenantId: TENANT, clientId: CLIENT, clientSecret: SECRET, subscriptionId: SUB });
    const vendor = await startMockVendor((req) =>
      az(req.host.split(':')[0] === 'localhost' ? { ...req, host: 'login.microsoftonline.com' } : req),
    );
    t.teardown(() => vendor.close());
    const run = async (
      upstream: NonNullable<Parameters<typeof createBroker>[0]>['upstream'],
      runner: Omit<RunnerOptions, 'broker' | 'store'>,
      tokenUrl: string,
    ) => {
      const broker = await createBroker({ upstream });
      const store = openSqliteStore(':memory:');
      t.teardown(async () => {
        await broker.close();
        await store.close();
      });
      return createRunner({ broker, store, ...runner }).run({
        extension,
        cli: 'curl',
        args: [
          '-sS',
          `https://management.azure.com/subscriptions/${SUB}/resourcegroups?api-version=2022-09-01`,
        ],
        connection: {
          ...(connection(SECRET) as Extract<Connection, { kind: 'oauth_client_credentials' }>),
          tokenUrl,
        },
        tier: {
          requested: 'read',
          organizationCeiling: 'write',
          assignmentAllow: 'write',
          identity: 'assigned',
        },
        context: { kind: 'agent-step' },
        deadlineMs: 60_000,
      });
    };
    const mints = () => vendor.log.filter((x) => x.path.endsWith('/oauth2/v2.0/token')).length;
    // The broker routes every name to the vendor on 127.0.0.1 but allows no loopback range.
    const viaBroker = await run(
      { ca: vendor.caPem, resolve: vendor.resolve },
      {},
      `https://login.microsoftonline.com/${TENANT}/oauth2/v2.0/token`,
    );
    t.match(viaBroker, { status: 'refused', refusal: { code: 'CREDENTIAL_TOKEN_MINT_FAILED' } });
    t.equal(mints(), 0, 'through the broker: the token endpoint was never reached');
    // A host that gave the minter only a CA: its own connections, and still no loopback.
    const ownCa = await run(
      { ca: vendor.caPem, resolve: vendor.resolve, allowAddresses: ['127.0.0.0/8'] },
      { mint: { ca: vendor.caPem } },
      `https://localhost:${vendor.port}/${TENANT}/oauth2/v2.0/token`,
    );
    t.match(ownCa, { status: 'refused', refusal: { code: 'CREDENTIAL_TOKEN_MINT_FAILED' } }, ownCa.stderr);
    t.equal(mints(), 0, 'with a CA of its own: the token endpoint was never reached');
  },
);

t.test(
  "a minted token the vendor reflects is masked in the result like the connection's own credential",
  async (t) => {
    const az = azureVendor({ tenantId: TENANT, clientId: CLIENT, clientSecret: SECRET, subscriptionId: SUB });
    const vendor = await startMockVendor((req) =>
      req.path === '/echo' ? { status: 200, body: { authorization: req.headers.authorization } } : az(req),
    );
    const broker = await createBroker({
      upstream: { ca: vendor.caPem, resolve: vendor.resolve, allowAddresses: ['127.0.0.0/8'] },
    });
    const store = openSqliteStore(':memory:');
    t.teardown(async () => {
      await broker.close();
      await vendor.close();
      await store.close();
    });
    const r = await createRunner({ broker, store }).run({
      extension,
      cli: 'curl',
      args: ['-sS', 'https://management.azure.com/echo'],
      connection: connection(SECRET),
      tier: {
        requested: 'read',
        organizationCeiling: 'write',
        assignmentAllow: 'write',
        identity: 'assigned',
      },
      context: { kind: 'agent-step' },
      deadlineMs: 60_000,
    });
    const sent = String(vendor.log.find((x) => x.path === '/echo')?.headers.authorization);
    t.match(sent, /^Bearer arm-token-/, 'ARM got the minted token');
    t.equal(r.status, 'completed', r.stderr);
    t.notOk(r.stdout.includes(sent.slice('Bearer '.length)), 'the minted token is not in the result');
    t.match(r.stdout, /\[REDACTED\]/);
  },
);
