/**
 * `clibroker config validate` and the sha256 of `manifest validate`, through the real
 * bundled program spawned as an operator runs it (its environment holds the secrets).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { buildBinary, spawnWith } from '../cli/fixtures/helpers.js';
import { atlassianExtension } from '../manifest/fixtures.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { makeFixture, sha256Of } from './fixtures.js';

const { bin } = await buildBinary();
t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));

t.test('a valid configuration: its tools, nothing withheld, and a warning for the plain image', async (t) => {
  const f = makeFixture(t, { real: true });
  // plain is allowed only where no daemon serves the configuration (an in-process host)
  f.config.images.base.profile = 'plain';
  delete f.config.daemon;
  const file = f.write();
  const args = ['config', 'validate', '--config', file, '--for', 'host'];
  const r = spawnWith(bin, args, { env: { GH_SECRET: f.secrets.gh } });
  t.equal(r.code, 0, r.stderr);
  t.same(r.data.tools, [
    { id: 'github:cli:gh', name: 'gh_cli', image: 'gh', profile: 'isolated' },
    { id: 'azure:cli:az', name: 'az_cli', image: 'azure-cli', profile: 'isolated' },
    { id: 'atlassian:cli:curl', name: 'curl_cli', image: 'base', profile: 'plain' },
  ]);
  t.match(r.env, { success: true, data: { valid: true, file, checkedFor: 'host', withheld: [] } });
  t.same(
    r.data.warnings.map((w: { path: string }) => w.path),
    ['images.base.profile'],
  );
  t.match(r.data.warnings[0].message, /could read the configuration and secret files/);
  for (const s of Object.values(f.secrets))
    t.notOk(r.stdout.includes(s) || r.stderr.includes(s), 'no secret in the output');

  chmodSync(file, 0o664);
  const loose = spawnWith(bin, args, { env: { GH_SECRET: f.secrets.gh } });
  t.match(loose.data.warnings[0], { path: '(root)', message: /mode 0664: group or other may rewrite it/ });
});

t.test(
  'by default it checks as clibroker daemon starts: what the in-process host accepts fails',
  async (t) => {
    const f = makeFixture(t, { real: true });
    f.config.images.base.profile = 'plain';
    delete f.config.daemon;
    const file = f.write();
    const r = spawnWith(bin, ['config', 'validate', '--config', file], { env: { GH_SECRET: f.secrets.gh } });
    t.equal(r.code, 1, 'a refused configuration exits non-zero');
    t.match(r.env, {
      success: false,
      error: {
        code: 'CONFIG_INVALID',
        message: /refused with 2 problems/,
        details: {
          checkedFor: 'daemon',
          count: 2,
          problems: [
            { code: 'CONFIG_IMAGE_PLAIN_UNDER_DAEMON', path: 'images.base.profile', message: String },
            { code: 'CONFIG_FIELD_INVALID', path: 'daemon', message: /clibroker daemon needs/ },
          ],
        },
      },
    });
    const served = spawnWith(bin, ['config', 'validate', '--config', file, '--for', 'serve'], {
      env: { GH_SECRET: f.secrets.gh },
    });
    t.equal(served.code, 1, 'clibroker serve refuses the plain image too');
    t.match(served.env, {
      error: {
        code: 'CONFIG_INVALID',
        details: { checkedFor: 'serve', count: 1, problems: [{ code: 'CONFIG_IMAGE_PLAIN_UNDER_DAEMON' }] },
      },
    });
    f.config.images.base.profile = 'isolated';
    f.write();
    const ok = spawnWith(bin, ['config', 'validate', '--config', file, '--for', 'serve'], {
      env: { GH_SECRET: f.secrets.gh },
    });
    t.equal(ok.code, 0, ok.stdout);
    t.equal(ok.data.checkedFor, 'serve');
  },
);

t.test('a CLI with a problem of its own is withheld, and two curl CLIs are qualified', async (t) => {
  const f = makeFixture(t, { real: true });
  f.config.extensions.azure.connection = { kind: 'api_key', apiKey: { env: 'GH_SECRET' } };
  const m = atlassianExtension();
  m.id = 'confluence';
  m.clis[0]!.binary.entrypoint = '/usr/bin/curl';
  f.putManifest('confluence', m);
  f.config.extensions.confluence.connection = {
    kind: 'basic',
    username: 'bot',
    password: { env: 'GH_SECRET' },
  };
  const file = f.write();
  const args = ['config', 'validate', '--config', file, '--for', 'serve'];
  const r = spawnWith(bin, args, { env: { GH_SECRET: f.secrets.gh } });
  t.equal(r.code, 0, r.stderr);
  t.same(
    r.data.tools.map((x: { name: string }) => x.name),
    ['gh_cli', 'atlassian__curl_cli', 'confluence__curl_cli'],
  );
  t.match(r.data.withheld, [
    {
      id: 'azure:cli:az',
      name: 'az_cli',
      code: 'CONFIG_CLI_NOT_RUNNABLE',
      path: 'extensions.azure.manifest.clis[0]',
      message: /IDENTITY_NOT_CONFIGURED/,
    },
  ]);
  t.equal(r.data.withheld.length, 1);
  t.match(r.data.warnings, [
    { path: 'extensions.atlassian', message: /also curl_cli: this one is offered as atlassian__curl_cli/ },
    { path: 'extensions.confluence', message: /offered as confluence__curl_cli/ },
  ]);

  f.config.strict = true;
  f.write();
  const strict = spawnWith(bin, args, { env: { GH_SECRET: f.secrets.gh } });
  t.equal(strict.code, 1, 'strict: all or nothing');
  t.match(strict.env, { success: false, error: { code: 'CONFIG_INVALID', details: { count: 2 } } });
  t.match(strict.stderr + strict.stdout, /CONFIG_CLI_NOT_RUNNABLE/);
  t.match(strict.stderr + strict.stdout, /CONFIG_TOOL_NAME_CONFLICT/);
});

t.test('conformance required: a tool is withheld until the store holds a pass for its program', async (t) => {
  const f = makeFixture(t, { real: true });
  delete f.config.daemon;
  f.config.conformance = 'required';
  f.config.images.base.conformance = 'waived';
  const file = f.write();
  const args = ['config', 'validate', '--config', file, '--for', 'host'];
  const before = spawnWith(bin, args, { env: { GH_SECRET: f.secrets.gh } });
  t.equal(before.code, 0, before.stderr);
  t.same(
    before.data.tools.map((x: { name: string }) => x.name),
    ['curl_cli'],
    'only the waived image is offered',
  );
  t.same(
    before.data.withheld.map((w: { name: string; code: string }) => [w.name, w.code]),
    [
      ['gh_cli', 'TOOL_VENDOR_CLI_CONFORMANCE_UNVERIFIED'],
      ['az_cli', 'TOOL_VENDOR_CLI_CONFORMANCE_UNVERIFIED'],
    ],
  );
  t.match(before.data.warnings, [{ path: 'images.base.conformance', message: /^waived: / }]);
  t.notOk(existsSync(join(f.dir, 'store.db')), 'validation creates no store');

  const store = openSqliteStore(join(f.dir, 'store.db'));
  const pin = (image: string) => f.config.images[image];
  await store.recordConformance({ ...pin('gh'), image: 'gh', verdict: 'pass' });
  await store.recordConformance({
    ...pin('azure-cli'),
    image: 'azure-cli',
    verdict: 'refused',
    code: 'CONFORMANCE_CA_NOT_TRUSTED',
  });
  await store.close();
  const after = spawnWith(bin, args, { env: { GH_SECRET: f.secrets.gh } });
  t.same(
    after.data.tools.map((x: { name: string }) => x.name),
    ['gh_cli', 'curl_cli'],
  );
  t.match(after.data.withheld, [
    { name: 'az_cli', code: 'TOOL_VENDOR_CLI_CONFORMANCE_FAILED', message: /CONFORMANCE_CA_NOT_TRUSTED/ },
  ]);
});

t.test('an invalid configuration: exit 1, every problem with its code and path, no secret', async (t) => {
  const f = makeFixture(t);
  f.config.extensions.github.connection.accessToken = f.secrets.gh;
  f.config.images.base.sha256 = '0'.repeat(64);
  const file = f.write();
  const r = spawnWith(bin, ['config', 'validate', '--config', file], { env: {} });
  t.equal(r.code, 1, 'a refused configuration is a failed command');
  t.match(r.env, {
    success: false,
    error: {
      type: 'runtime',
      code: 'CONFIG_INVALID',
      details: {
        checkedFor: 'daemon',
        count: 2,
        problems: [
          { code: 'CONFIG_SECRET_INLINE', path: 'extensions.github.connection.accessToken', message: String },
          { code: 'CONFIG_IMAGE_HASH_MISMATCH', path: 'images.base.sha256', message: String },
        ],
      },
    },
  });
  t.match(r.stderr, /CONFIG_INVALID|refused with 2 problems/, 'the prose line on stderr');
  for (const s of Object.values(f.secrets))
    t.notOk(r.stdout.includes(s) || r.stderr.includes(s), 'no secret in the output');
});

t.test(
  'a disabled toolkit: its CLI is withheld with the toolkit named; an undeclared one is refused',
  async (t) => {
    const f = makeFixture(t);
    f.config.extensions.atlassian.toolkits = { jira: { enabled: false } };
    const file = f.write();
    const r = spawnWith(bin, ['config', 'validate', '--config', file], { env: { GH_SECRET: f.secrets.gh } });
    t.equal(r.code, 0, r.stderr);
    t.same(
      r.data.tools.map((x: { id: string }) => x.id),
      ['github:cli:gh', 'azure:cli:az'],
    );
    t.match(r.data.withheld, [
      {
        id: 'atlassian:cli:curl',
        name: 'curl_cli',
        code: 'TOOL_VENDOR_CLI_TOOLKIT_DISABLED',
        path: 'extensions.atlassian.toolkits.jira.enabled',
        message: /toolkit "jira", which the configuration disables/,
      },
    ]);
    t.equal(r.data.withheld.length, 1);

    f.config.extensions.atlassian.toolkits = { confluence: { enabled: false } };
    const bad = spawnWith(bin, ['config', 'validate', '--config', f.write()], {
      env: { GH_SECRET: f.secrets.gh },
    });
    t.equal(bad.code, 1, bad.stdout);
    t.match(bad.env, {
      error: {
        code: 'CONFIG_INVALID',
        details: {
          count: 1,
          problems: [
            {
              code: 'CONFIG_FIELD_INVALID',
              path: 'extensions.atlassian.toolkits.confluence',
              message: /declares no such toolkit \(it declares: jira, reports\)/,
            },
          ],
        },
      },
    });
  },
);

t.test('the store must be openable: a directory that cannot hold it, never a PostgreSQL URL', async (t) => {
  const f = makeFixture(t);
  f.config.store = 'config.json/store.db';
  const file = f.write();
  const r = spawnWith(bin, ['config', 'validate', '--config', file], { env: { GH_SECRET: f.secrets.gh } });
  t.equal(r.code, 1, r.stdout);
  t.match(r.env, {
    error: {
      code: 'CONFIG_INVALID',
      details: {
        count: 1,
        problems: [{ code: 'CONFIG_FIELD_INVALID', path: 'store', message: /is not a directory/ }],
      },
    },
  });

  // a PostgreSQL URL written as the store is never a file: refused (tests/config/store.test.ts has the forms)
  const password = 'pg-pass-not-shown-3141';
  f.config.store = `postgres://broker:${password}@db.example/clibroker`;
  f.write();
  const pg = spawnWith(bin, ['config', 'validate', '--config', file], { env: { GH_SECRET: f.secrets.gh } });
  t.equal(pg.code, 1, pg.stdout);
  t.match(pg.env, {
    error: {
      details: { problems: [{ code: 'CONFIG_SECRET_INLINE', path: 'store', message: /not shown/ }] },
    },
  });
  t.notOk(pg.stdout.includes(password) || pg.stderr.includes(password), 'the URL is never echoed');
  f.config.store = 'postgres://';
  f.write();
  const bad = spawnWith(bin, ['config', 'validate', '--config', file], { env: { GH_SECRET: f.secrets.gh } });
  t.match(bad.env, {
    error: {
      details: {
        problems: [{ code: 'CONFIG_FIELD_INVALID', path: 'store', message: /\{"postgres": \{"env"/ }],
      },
    },
  });

  f.config.store = 'store.db';
  f.write();
  const fine = spawnWith(bin, ['config', 'validate', '--config', file], { env: { GH_SECRET: f.secrets.gh } });
  t.equal(fine.code, 0, fine.stdout);
  t.notOk(existsSync(join(f.dir, 'store.db')), 'validation creates no store');
});

t.test('as clibroker daemon starts: a socket directory another user could write', async (t) => {
  const f = makeFixture(t);
  const open = join(f.dir, 'sock');
  mkdirSync(open);
  chmodSync(open, 0o777);
  f.config.daemon.socket = join(open, 'broker.sock');
  const file = f.write();
  const r = spawnWith(bin, ['config', 'validate', '--config', file], { env: { GH_SECRET: f.secrets.gh } });
  t.equal(r.code, 1, r.stdout);
  t.match(r.env, {
    error: {
      details: {
        count: 1,
        problems: [
          {
            code: 'DEPLOY_SOCKET_DIR_UNSAFE',
            path: 'daemon.socket',
            message: /mode 0777/,
          },
        ],
      },
    },
  });
  const serve = spawnWith(bin, ['config', 'validate', '--config', file, '--for', 'serve'], {
    env: { GH_SECRET: f.secrets.gh },
  });
  t.equal(serve.code, 0, 'clibroker serve does not use the socket');

  chmodSync(open, 0o750);
  const ok = spawnWith(bin, ['config', 'validate', '--config', file], { env: { GH_SECRET: f.secrets.gh } });
  t.equal(ok.code, 0, ok.stdout);
  f.config.daemon.socket = join(f.dir, 'not-yet', 'broker.sock');
  f.write();
  const missing = spawnWith(bin, ['config', 'validate', '--config', file], {
    env: { GH_SECRET: f.secrets.gh },
  });
  t.equal(missing.code, 0, 'a directory systemd creates at start is not a problem');
  t.match(missing.data.warnings, [{ path: 'daemon.socket', message: /does not exist now/ }]);
});

t.test('the SQLite driver must load: a missing better-sqlite3 is a problem of the store', async (t) => {
  const { checkConfigFile } = await import('../../src/config/validate.js');
  const missing = async () => 'better-sqlite3 is not installed (test)';
  const f = makeFixture(t);
  const file = f.write();
  const c = await checkConfigFile(file, { env: f.env, probeSqliteDriver: missing });
  t.match(c.problems, [
    {
      code: 'STORE_DRIVER_MISSING',
      path: 'store',
      message: /SQLite store cannot be opened: better-sqlite3 is not installed/,
    },
  ]);
  t.equal(c.problems.length, 1);
  t.same((await checkConfigFile(file, { env: f.env })).problems, [], 'the real driver loads here');
});

t.test('details fit an envelope: many long problems are shortened, never dropped whole', async (t) => {
  const { fitProblems } = await import('../../src/config/validate.js');
  const many = Array.from({ length: 40 }, (_, i) => ({
    code: 'CONFIG_FIELD_INVALID',
    path: `p${i}`,
    message: 'x'.repeat(400),
  }));
  const d = fitProblems(many, { checkedFor: 'daemon' });
  t.equal(d.count, 40);
  t.equal(d.problems.length, 32);
  t.ok(JSON.stringify(d).length <= 7000);
  t.same(
    fitProblems(many.slice(0, 2)).problems.map((p) => p.message.length),
    [201, 201],
    'cut at 200 and marked',
  );
});

t.test('config validate is an operator command: agents are not offered it', async (t) => {
  const r = spawnWith(bin, ['agent', 'manifest', '--format', 'anthropic']);
  const names = (r.data as { name: string }[]).map((d) => d.name);
  t.notOk(names.includes('config_validate'));
  t.ok(names.includes('run'), 'the list is real');
});

t.test(
  'manifest validate prints the sha256 of the manifest file it read, the pin the loader checks',
  async (t) => {
    const f = makeFixture(t);
    const path = join(f.dir, 'github.manifest.json');
    const r = spawnWith(bin, ['manifest', 'validate', '--manifest-file', path]);
    t.match(r.env, { success: true, data: { valid: true, sha256: sha256Of(readFileSync(path)) } });
    t.equal(r.data.sha256, f.config.extensions.github.sha256);
    const piped = spawnWith(bin, ['manifest', 'validate', '--manifest-file', '-'], {
      input: readFileSync(path, 'utf8'),
    });
    t.equal(piped.data.sha256, f.config.extensions.github.sha256, 'from stdin too');
    const inline = spawnWith(bin, ['manifest', 'validate', '--manifest', readFileSync(path, 'utf8')]);
    t.equal(inline.data.sha256, undefined, 'no file, no file hash');
  },
);
