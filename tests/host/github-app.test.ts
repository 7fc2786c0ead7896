/**
 * The in-process host over a real configuration with a `github_app` connection: real gh in
 * the isolated profile, the app's private key in a 0600 file, the mock GitHub vendor in app
 * mode reached through the configuration's upstream routing. The host mints one installation
 * token per tier, reuses it across calls, records its grant in the execution event, and no
 * secret (the key, the app's JWT, a token) reaches the tool output or the store.
 */
import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import type { OperatorConfig } from '../../src/config/types.js';
import { createHost } from '../../src/host/index.js';
import { ghCli, githubExtension } from '../../src/manifest/examples.js';
import type { ExtensionManifest } from '../../src/manifest/types.js';
import { githubVendor, type GithubVendorInstallationToken } from '../../src/mockvendor/github.js';
import { startMockVendor } from '../../src/mockvendor/server.js';
import { configDir } from '../helpers/config.js';

const gh: ExtensionManifest = githubExtension([ghCli({ image: 'gh' })]);

t.test(
  'a configured GitHub App: one token per tier, reused across calls, audited, never shown',
  async (t) => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const minted: GithubVendorInstallationToken[] = [];
    const vendor = await startMockVendor(
      githubVendor({
        app: {
          appId: '1001',
          installationId: '2002',
          publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
          onToken: (m) => minted.push(m),
        },
      }),
    );
    const dir = configDir();
    const config: OperatorConfig = {
      version: 1,
      conformance: 'optional',
      organization: { ceiling: 'write' },
      images: { gh: dir.image('/usr/bin/gh') },
      extensions: {
        github: {
          ...dir.manifest(gh),
          connection: {
            kind: 'github_app',
            appId: '1001',
            installationId: '2002',
            privateKey: dir.secret('github-app', pem),
          },
        },
      },
      store: join(dir.dir, 'store.db'),
      deadlineSeconds: 60,
      upstream: dir.upstream(vendor, ['api.github.com']),
    };
    const host = await createHost(await loadConfig(dir.write(config)));
    t.teardown(async () => {
      await host.close();
      await vendor.close();
      dir.remove();
    });
    await host.store.setAssignmentTier({
      extensionId: 'github',
      assignmentId: 'default',
      cliId: 'gh',
      tier: 'write',
      who: 'admin@example.com',
    });

    const list = { args: ['issue', 'list', '--repo', 'acme/app'] };
    const outs = [await host.runTool('gh_cli', list), await host.runTool('gh_cli', list)];
    for (const o of outs) t.match(o, { exitCode: 0, cliTier: 'read', stdout: /^12\tOPEN\tCrash on start/ });
    t.equal(minted.length, 1, 'two read calls, one token');
    t.equal(minted[0]!.permissions.issues, 'read');

    const create = { args: ['issue', 'create', '--repo', 'acme/app', '--title', 'x', '--body', 'y'] };
    const made = await host.runTool('gh_cli', create, { cliTier: 'write' });
    t.match(made, { exitCode: 0, cliTier: 'write' }, made.stderr);
    t.equal(minted.length, 2, 'the write tier minted its own');
    t.equal(minted[1]!.permissions.issues, 'write');

    const events = (await host.store.listEvents({ limit: 100 })).map((e) => e.event);
    const executions = events.filter((e) => e.type === 'extension.execution.succeeded');
    t.same(
      executions.map((e) =>
        'mintedToken' in e ? [e.mintedToken?.tier, e.mintedToken?.permissions.issues] : [],
      ),
      [
        ['read', 'read'],
        ['read', 'read'],
        ['write', 'write'],
      ],
    );
    const jwts = vendor.log
      .filter((r) => r.path.endsWith('/access_tokens'))
      .map((r) => String(r.headers.authorization).slice(7));
    const secrets = [pem, ...pem.split('\n').filter((l) => l.length >= 16 && !l.startsWith('-----'))];
    secrets.push(...minted.map((m) => m.token), ...jwts);
    const seen = JSON.stringify([outs, made, events]);
    t.same(
      secrets.filter((s) => seen.includes(s)).map((s) => s.slice(0, 4)),
      [],
      'no key, JWT or token in the tool output or the store',
    );
  },
);
