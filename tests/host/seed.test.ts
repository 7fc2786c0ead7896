import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import type { BrokerError } from '../../src/errors.js';
import { createHost } from '../../src/host/index.js';
import { GHE, SEED, SEED_SECRETS, seedDeployment } from '../helpers/seed.js';

// One configuration, three seed-shaped extensions, the real gh, curl and az in the isolated
// profile, in-process (the way a host without an agent shell embeds it).

t.setTimeout(600_000);

t.test(
  'gh, curl for Atlassian and az load from one configuration and run against the mock vendor',
  async (t) => {
    const d = await seedDeployment();
    const host = await createHost(await loadConfig(d.file));
    t.teardown(async () => {
      await host.close();
      await d.close();
    });
    t.same(
      host.tools().map((x) => x.id),
      ['github:cli:gh', 'atlassian:cli:curl', 'azure:cli:az'],
    );

    const gh = await host.runTool('gh_cli', { args: ['api', 'user'] });
    t.equal(gh.exitCode, 0, gh.stderr);
    t.match(JSON.parse(gh.stdout), { login: 'octocat' });
    const ghReqs = d.vendor.log.filter((r) => r.host === GHE);
    t.ok(ghReqs.length > 0, 'gh went to the organization endpoint (GH_HOST)');
    t.ok(
      ghReqs.every((r) => r.headers.authorization === `token ${SEED.ghToken}`),
      'with the real token',
    );
    t.notOk(
      d.vendor.log.some((r) => r.host === 'api.github.com'),
      'the public host got nothing',
    );

    const me = await host.runTool('curl_cli', { args: ['-sS', 'https://api.atlassian.com/me'] });
    t.equal(me.exitCode, 0, me.stderr);
    t.match(JSON.parse(me.stdout), { email: SEED.atlassianUser });
    const bb = await host.runTool('curl_cli', {
      args: ['-sS', '--fail-with-body', 'https://api.bitbucket.org/2.0/repositories/acme'],
    });
    t.equal(bb.exitCode, 0, `bitbucket got no credential: ${bb.stdout}`);

    const az = await host.runTool('az_cli', { args: ['group', 'list'] });
    t.equal(az.exitCode, 0, az.stderr);
    t.same(
      JSON.parse(az.stdout).map((g: { name: string }) => g.name),
      ['rg1'],
    );
    t.ok(
      d.vendor.log.some(
        (r) =>
          r.method === 'POST' &&
          r.host === 'login.microsoftonline.com' &&
          new URLSearchParams(r.body.toString()).get('client_secret') === SEED.azSecret,
      ),
      'the broker minted with the real secret',
    );

    const del = await host
      .runTool(
        'az_cli',
        { args: ['group', 'delete', '-n', 'rg1', '--yes', '--no-wait'] },
        { cliTier: 'write' },
      )
      .catch((e: BrokerError) => e);
    t.match(
      del,
      {
        code: 'POLICY_BLOCKED',
        details: { policyCode: 'CLI_REQUEST_TIER_DENIED', cliTierReason: 'assignment-read' },
      },
      'the assignment switch is read until a person raises it',
    );

    // help on a command with subcommands comes from the help tree: no sandbox, no egress, and
    // still the call's one execution event (cliTierReason help-from-tree)
    const executions = async () =>
      (
        await host.store.listEvents({
          limit: 1000,
          type: ['extension.execution.succeeded', 'extension.execution.failed'],
        })
      ).map((e) => e.event as { cliTierReason: string });
    const runs = async () => (await executions()).filter((e) => e.cliTierReason !== 'help-from-tree').length;
    const egress = async () =>
      (await host.store.listEvents({ limit: 1000, type: ['egress.allowed', 'egress.blocked'] })).length;
    const sent = await egress();
    const before = await runs();
    const help = await host.runTool('gh_cli', { args: ['repo', '--help'] });
    t.equal(help.cliTierReason, 'help-from-tree');
    t.match(help.stdout, /delete/, "the tree lists the group's subcommands");
    t.equal(await runs(), before, 'nothing ran');
    t.equal(await egress(), sent, 'nothing was sent');
    t.equal((await executions()).at(-1)?.cliTierReason, 'help-from-tree', 'the call left its event');
    const leaf = await host.runTool('gh_cli', { args: ['api', '--help'] });
    t.equal(leaf.exitCode, 0);
    t.not(leaf.cliTierReason, 'help-from-tree', 'help for a leaf runs the real CLI');
    t.equal(await runs(), before + 1);

    const all = JSON.stringify([gh, me, bb, az, (del as BrokerError).message, (del as BrokerError).details]);
    for (const s of SEED_SECRETS) t.notOk(all.includes(s), 'no secret in any answer');
  },
);
