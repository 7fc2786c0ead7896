/**
 * A good configuration loads: the seed-shaped extensions with /usr/bin/gh, /usr/bin/az and
 * /usr/bin/curl pinned by their real sha256 offer gh_cli, az_cli and curl_cli; the same
 * configuration as a TypeScript object loads the same; secrets are read at call time.
 */
import { chmodSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { type OperatorConfig, loadConfig, manifestSha256 } from '../../src/config/index.js';
import { atlassianExtension, azExtension, ghExtension } from '../manifest/fixtures.js';
import { makeFixture, rejection } from './fixtures.js';

t.test(
  'the seed-shaped configuration with the real CLIs loads and offers gh_cli, az_cli and curl_cli',
  async (t) => {
    const f = makeFixture(t, { real: true });
    const file = f.write();
    const c = await loadConfig(file, { env: f.env });
    t.same(
      c.tools.map((x) => [
        x.id,
        x.name,
        x.extensionId,
        x.cliId,
        x.image.name,
        x.image.executable,
        x.image.profile,
      ]),
      [
        ['github:cli:gh', 'gh_cli', 'github', 'gh', 'gh', '/usr/bin/gh', 'isolated'],
        ['azure:cli:az', 'az_cli', 'azure', 'az', 'azure-cli', '/usr/bin/az', 'isolated'],
        ['atlassian:cli:curl', 'curl_cli', 'atlassian', 'curl', 'base', '/usr/bin/curl', 'isolated'],
      ],
    );
    t.match(
      c.tools[0]!.description,
      /^gh: Work seamlessly with GitHub from the command line\. Commands: issue \(Manage issues\), repo .*crawled to a limited depth \(max_depth\)/,
    );
    t.same(c.withheld, []);
    t.equal(c.file, file);
    t.equal(c.ceiling, 'write');
    t.equal(c.store, join(f.dir, 'store.db'));
    t.equal(c.deadlineMs, 120_000);
    t.same(c.daemon, {
      socket: join(f.dir, 'daemon.sock'),
      socketMode: '0660',
      cliTier: 'read',
      context: 'agent-step',
      executorToken: { file: join(f.dir, 'executor.token') },
    });
    t.same([...c.upstream!.connectTo], [['api.github.com', { host: '127.0.0.1', port: 8443 }]]);
    t.same(c.upstream!.allowAddresses, ['127.0.0.0/8']);
    t.same([...c.extensions.keys()], ['github', 'azure', 'atlassian']);
    t.match(c.extensions.get('github'), {
      id: 'github',
      endpoint: 'https://ghe.acme.example',
      identity: 'assigned',
      assignment: 'default',
      manifest: { id: 'github' },
    });
    t.same(
      c.extensions.get('atlassian')!.connection,
      { kind: 'basic', username: 'bot@acme.example', password: { file: join(f.dir, 'jira.secret') } },
      'file references are resolved, never read into the result',
    );
    t.same(
      [...c.hiddenPaths].sort(),
      [
        file,
        join(f.dir, 'az.secret'),
        join(f.dir, 'jira.secret'),
        join(f.dir, 'executor.token'),
        join(f.dir, 'store.db'),
        join(f.dir, 'store.db-wal'),
        join(f.dir, 'store.db-shm'),
        join(f.dir, 'store.db-journal'),
        join(f.dir, 'store.db.runs'),
        join(f.dir, 'daemon.sock'),
      ].sort(),
    );
    await c.tools[0]!.image.verify();
    t.same(await c.connection('github'), { kind: 'oauth_access_token', accessToken: f.secrets.gh });
    t.same(
      await c.connection('azure'),
      {
        kind: 'oauth_client_credentials',
        clientId: '00000000-0000-4000-8000-000000000001',
        tenantId: 'acme-tenant',
        tokenUrl: 'https://login.microsoftonline.com/acme-tenant/oauth2/v2.0/token',
        clientSecret: f.secrets.az,
      },
      'the trailing newline of the secret file is not part of the secret',
    );
    t.equal(await c.executorToken(), f.secrets.executor);
  },
);

t.test(
  'the same configuration as an object (manifests inline, hashed canonically) loads the same',
  async (t) => {
    const f = makeFixture(t, { real: true });
    const manifests = { github: ghExtension(), azure: azExtension(), atlassian: atlassianExtension() };
    const cfg = structuredClone(f.config) as OperatorConfig;
    for (const [k, m] of Object.entries(manifests)) {
      cfg.extensions[k]!.manifest = m;
      cfg.extensions[k]!.sha256 = manifestSha256(m);
    }
    const c = await loadConfig(cfg, { baseDir: f.dir, env: f.env });
    t.same(
      c.tools.map((x) => x.name),
      ['gh_cli', 'az_cli', 'curl_cli'],
    );
    t.equal(c.file, undefined);
    t.equal(c.store, join(f.dir, 'store.db'), 'relative paths resolve against baseDir');
    t.same(await c.connection('atlassian'), {
      kind: 'basic',
      username: 'bot@acme.example',
      password: f.secrets.jira,
    });

    // reordering the object's keys does not change its pin; changing a value does
    const reordered = {
      clis: manifests.github.clis,
      toolkits: manifests.github.toolkits,
      egress: manifests.github.egress,
      id: 'github',
    };
    t.equal(manifestSha256(reordered), manifestSha256(manifests.github));
    cfg.extensions['github']!.manifest = { ...manifests.github, egress: ['api.github.com'] };
    const e = await rejection(loadConfig(cfg, { baseDir: f.dir, env: f.env }));
    t.match(e.details, {
      problems: [
        {
          code: 'CONFIG_MANIFEST_HASH_MISMATCH',
          path: 'extensions.github.sha256',
          message: /canonical JSON has sha256/,
        },
      ],
    });
  },
);

t.test(
  'secrets are read at every call: a rotation takes effect, a loosened mode or an unset variable fails without the value',
  async (t) => {
    const f = makeFixture(t);
    const c = await loadConfig(f.write(), { env: f.env });
    const jira = join(f.dir, 'jira.secret');
    writeFileSync(jira, 'rotated-password\n');
    t.same(await c.connection('atlassian'), {
      kind: 'basic',
      username: 'bot@acme.example',
      password: 'rotated-password',
    });

    chmodSync(jira, 0o644);
    const mode = await rejection(c.connection('atlassian'));
    t.equal(mode.code, 'CONFIG_SECRET_UNAVAILABLE');
    t.match(mode.message, `file ${jira} has mode 0644`);
    t.same(mode.details, {
      field: 'extensions.atlassian.connection.password',
      reference: { file: jira },
      reason: 'CONFIG_SECRET_FILE_MODE',
    });
    t.notMatch(JSON.stringify(mode) + mode.message, 'rotated-password');

    f.env['GH_SECRET'] = 'ghp_rotatedrotatedrotatedrotated0000';
    t.same(await c.connection('github'), {
      kind: 'oauth_access_token',
      accessToken: 'ghp_rotatedrotatedrotatedrotated0000',
    });
    const secret = f.env['GH_SECRET'];
    delete f.env['GH_SECRET'];
    const unset = await rejection(c.connection('github'));
    t.equal(unset.code, 'CONFIG_SECRET_UNAVAILABLE');
    t.match(unset.message, 'environment variable GH_SECRET is not set');
    t.notMatch(JSON.stringify(unset) + unset.message, secret!);

    writeFileSync(join(f.dir, 'executor.token'), '\n');
    t.match(await rejection(c.executorToken()), {
      code: 'CONFIG_SECRET_UNAVAILABLE',
      message: /executor\.token is empty/,
    });
    t.match(await rejection(c.connection('nope')), { code: 'TOOL_VENDOR_CLI_NOT_OFFERED' });
  },
);

t.test(
  'defaults: deadline 270 s, socket mode 0660, tier read, context agent-step; no daemon, no upstream, an in-memory store',
  async (t) => {
    const f = makeFixture(t);
    delete f.config.deadlineSeconds;
    delete f.config.upstream;
    f.config.daemon = { socket: '/run/clibroker/broker.sock' };
    f.config.store = ':memory:';
    let c = await loadConfig(f.write(), { env: f.env });
    t.equal(c.deadlineMs, 270_000);
    t.same(c.daemon, {
      socket: '/run/clibroker/broker.sock',
      socketMode: '0660',
      cliTier: 'read',
      context: 'agent-step',
    });
    t.equal(c.upstream, undefined);
    t.equal(c.store, ':memory:');
    t.equal(await c.executorToken(), undefined);
    t.notOk(c.hiddenPaths.some((p) => p.includes(':memory:')));

    // a secret reached through a symbolic link is hidden under both names
    symlinkSync(join(f.dir, 'jira.secret'), join(f.dir, 'jira.link'));
    f.config.extensions.atlassian.connection.password = { file: 'jira.link' };
    c = await loadConfig(f.write(), { env: f.env });
    t.ok(
      c.hiddenPaths.includes(join(f.dir, 'jira.link')) && c.hiddenPaths.includes(join(f.dir, 'jira.secret')),
    );
    delete f.config.daemon;
    c = await loadConfig(f.write(), { env: f.env });
    t.equal(c.daemon, undefined);
  },
);

t.test(
  'a plain image loads for an in-process host, and is refused when a daemon or server serves the configuration',
  async (t) => {
    const f = makeFixture(t);
    f.config.images.base.profile = 'plain';
    delete f.config.daemon;
    const file = f.write();
    const c = await loadConfig(file, { env: f.env });
    t.equal(c.images.get('base')!.profile, 'plain', 'no daemon block, not serving: the host decides');

    const e = await rejection(loadConfig(file, { env: f.env, serving: true }));
    t.equal(e.code, 'CONFIG_INVALID');
    t.match(e.details, {
      problems: [{ code: 'CONFIG_IMAGE_PLAIN_UNDER_DAEMON', path: 'images.base.profile' }],
    });
    t.equal((e.details!['problems'] as unknown[]).length, 1, 'only the plain image is a problem');
  },
);

t.test(
  'storeRetention: whole days, 1 or more, loaded as storeRetentionDays; absent keeps forever',
  async (t) => {
    // a number: loaded as it; a path: refused there (CONFIG_FIELD_INVALID unless another code is given)
    const cases: Record<string, [value: unknown, want: number | string | undefined, code?: string]> = {
      'absent: keep every event': [undefined, undefined],
      '30 days': [{ days: 30 }, 30],
      'one day, the least': [{ days: 1 }, 1],
      'zero days is refused': [{ days: 0 }, 'storeRetention.days'],
      'a fraction is refused': [{ days: 1.5 }, 'storeRetention.days'],
      'a bare number is refused (an object, for room to grow)': [30, 'storeRetention'],
      'an unknown key is refused': [{ days: 30, hours: 2 }, 'storeRetention.hours', 'CONFIG_FIELD_UNKNOWN'],
    };
    t.plan(Object.keys(cases).length);
    for (const [name, [value, want, code = 'CONFIG_FIELD_INVALID']] of Object.entries(cases)) {
      const f = makeFixture(t);
      if (value !== undefined) f.config.storeRetention = value;
      if (typeof want === 'string') {
        const e = await rejection(loadConfig(f.write(), { env: f.env }));
        t.match(e.details, { problems: [{ code, path: want }] }, name);
      } else t.equal((await loadConfig(f.write(), { env: f.env })).storeRetentionDays, want, name);
    }
  },
);
