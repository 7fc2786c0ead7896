import t from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import type { AuditEvent } from '../../src/broker/types.js';
import type { Connection } from '../../src/credentials/types.js';
import { defineExtension } from '../../src/manifest/define.js';
import { azCli, azureExtension } from '../../src/manifest/examples.js';
import { azureVendor } from '../../src/mockvendor/azure.js';
import { startMockVendor } from '../../src/mockvendor/server.js';
import { createRunner } from '../../src/runs/index.js';
import { openSqliteStore } from '../../src/store/index.js';

// Real azure-cli 2.45 (Debian) through the broker: the service-principal login runs as the
// bootstrap preamble against clibroker's own token answer; ARM calls carry a token the
// broker minted with the real secret, which never enters the sandbox.

const TENANT = '72f988bf-0000-4000-8000-000000000001';
const CLIENT = '11111111-2222-3333-4444-555555555555';
const SECRET = 'AzRealClientSecret~kept.by.clibroker.0001';
const SUB = '00000000-1111-2222-3333-444444444444';

/** The example az, run from /usr/bin/az. */
const extension = defineExtension(azureExtension([azCli({ entrypoint: '/usr/bin/az' })]));

const connection: Connection = {
  kind: 'oauth_client_credentials',
  clientId: CLIENT,
  clientSecret: SECRET,
  tenantId: TENANT,
  tokenUrl: `https://login.microsoftonline.com/${TENANT}/oauth2/v2.0/token`,
};

t.test(
  'az: preamble login against the bootstrap, group list with a minted ARM token, group delete pauses',
  async (t) => {
    const handler = azureVendor({
      tenantId: TENANT,
      clientId: CLIENT,
      clientSecret: SECRET,
      subscriptionId: SUB,
    });
    const vendor = await startMockVendor(handler);
    const events: AuditEvent[] = [];
    const broker = await createBroker({
      upstream: { ca: vendor.caPem, resolve: vendor.resolve, allowAddresses: ['127.0.0.0/8'] },
      onAudit: (e) => events.push(e),
    });
    const store = openSqliteStore(':memory:');
    // No dispatcher for the minter: it reaches the token endpoint through the broker's routing.
    const runner = createRunner({ broker, store });
    t.teardown(async () => {
      await broker.close();
      await vendor.close();
      await store.close();
    });
    const input = (args: string[], tier: 'read' | 'write' = 'read') => ({
      extension,
      cli: 'az',
      args,
      connection,
      tier: {
        requested: tier,
        organizationCeiling: 'write',
        assignmentAllow: 'write',
        identity: 'assigned',
      } as const,
      context: { kind: 'agent-step' as const },
      deadlineMs: 120_000,
    });

    const list = await runner.run(input(['group', 'list']));
    t.equal(list.status, 'completed', `${list.stderr}\n${JSON.stringify(list.refusals)}`);
    t.same(
      JSON.parse(list.stdout).map((g: { name: string }) => g.name),
      ['rg1'],
    );
    const tokenPosts = vendor.log.filter((r) => r.method === 'POST' && r.path.endsWith('/oauth2/v2.0/token'));
    t.equal(tokenPosts.length, 1, "one real token request: the minter's");
    t.match(
      tokenPosts[0]!.body.toString(),
      /client_secret=AzRealClientSecret/,
      'the minter used the real secret',
    );
    t.ok(
      events.some(
        (e) => e.host === 'login.microsoftonline.com' && e.method === 'POST' && /bootstrap/.test(e.reason),
      ),
      "the child's token request was answered by clibroker",
    );
    t.notOk(
      JSON.stringify(vendor.log.map((r) => [r.headers, r.body.toString()])).includes('clibroker-placeholder'),
      'no placeholder reached the vendor',
    );
    for (const r of vendor.log.filter((r) => r.host === 'management.azure.com'))
      t.match(
        r.headers.authorization,
        /^Bearer arm-token-1-/,
        `${r.method} ${r.path} carries the minted token`,
      );
    const blockedPhoneHome = list.refusals.filter(
      (r) => r.host !== 'management.azure.com' && r.host !== 'login.microsoftonline.com',
    );
    t.ok(
      blockedPhoneHome.some((r) => r.host === 'azure.microsoft.com' && r.method === 'HEAD'),
      "az's update check was attempted (fresh HOME)",
    );
    t.same(
      blockedPhoneHome.map((r) => r.policyCode),
      blockedPhoneHome.map(() => 'CLI_EGRESS_HOST_DENIED'),
      "az's update check is blocked and audited, not fatal",
    );
    t.notMatch(list.stdout + list.stderr, new RegExp(SECRET), 'the secret is nowhere in the output');

    const del = await runner.run(input(['group', 'delete', '-n', 'rg1', '--yes', '--no-wait'], 'write'));
    t.equal(del.status, 'paused', del.stderr);
    if (del.status === 'paused')
      t.match(del.approval, {
        method: 'DELETE',
        host: 'management.azure.com',
        path: `/subscriptions/${SUB}/resourcegroups/rg1`,
      });
    t.equal(vendor.log.filter((r) => r.method === 'DELETE').length, 0);
    t.match(del.stderr, /CLI_APPROVAL_PENDING/, 'az printed the ARM-style refusal');
  },
);
