/**
 * `clibroker config validate` and the sha256 of `manifest validate`, through the real
 * bundled program spawned as an operator runs it (its environment holds the secrets).
 */
import { chmodSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { buildBinary, spawnWith } from '../cli/fixtures/helpers.js';
import { makeFixture, sha256Of } from './fixtures.js';

const { bin } = await buildBinary();
t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));

t.test('a valid configuration: its tools, nothing withheld, and a warning for the plain image', async (t) => {
  const f = makeFixture(t, { real: true });
  // plain is allowed only where no daemon serves the configuration (an in-process host)
  f.config.images.base.profile = 'plain';
  delete f.config.daemon;
  const file = f.write();
  const r = spawnWith(bin, ['config', 'validate', '--config', file], { env: { GH_SECRET: f.secrets.gh } });
  t.equal(r.code, 0, r.stderr);
  t.same(r.data.tools, [
    { id: 'github:cli:gh', name: 'gh_cli', image: 'gh', profile: 'isolated' },
    { id: 'azure:cli:az', name: 'az_cli', image: 'azure-cli', profile: 'isolated' },
    { id: 'atlassian:cli:curl', name: 'curl_cli', image: 'base', profile: 'plain' },
  ]);
  t.match(r.env, { success: true, data: { valid: true, file, withheld: [] } });
  t.same(
    r.data.warnings.map((w: { path: string }) => w.path),
    ['images.base.profile'],
  );
  t.match(r.data.warnings[0].message, /could read the configuration and secret files/);
  for (const s of Object.values(f.secrets))
    t.notOk(r.stdout.includes(s) || r.stderr.includes(s), 'no secret in the output');

  chmodSync(file, 0o664);
  const loose = spawnWith(bin, ['config', 'validate', '--config', file], {
    env: { GH_SECRET: f.secrets.gh },
  });
  t.match(loose.data.warnings[0], { path: '(root)', message: /mode 0664: group or other may rewrite it/ });
});

t.test('an invalid configuration: every problem with its code and path, no secret', async (t) => {
  const f = makeFixture(t);
  f.config.extensions.github.connection.accessToken = f.secrets.gh;
  f.config.images.base.sha256 = '0'.repeat(64);
  const file = f.write();
  const r = spawnWith(bin, ['config', 'validate', '--config', file], { env: {} });
  t.equal(r.code, 0, 'a refused configuration is a successful validation');
  t.match(r.env, {
    success: true,
    data: {
      valid: false,
      problems: [
        { code: 'CONFIG_SECRET_INLINE', path: 'extensions.github.connection.accessToken', message: String },
        { code: 'CONFIG_IMAGE_HASH_MISMATCH', path: 'images.base.sha256', message: String },
      ],
    },
  });
  t.equal(r.data.problems.length, 2);
  for (const s of Object.values(f.secrets))
    t.notOk(r.stdout.includes(s) || r.stderr.includes(s), 'no secret in the output');
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
