/**
 * A `github_app` connection in the operator configuration: its private key is a secret
 * reference read at call time, its tier permission sets are checked at load (the read set
 * holds read levels only), and a malformed field is refused where it is written.
 */
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config/index.js';
import { makeFixture, rejection } from './fixtures.js';

const PEM = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();

const appConnection = () => ({
  kind: 'github_app',
  appId: '1001',
  installationId: '2002',
  privateKey: { file: 'app.pem' },
  permissions: {
    read: { issues: 'read', metadata: 'read' },
    write: { issues: 'write', contents: 'write', metadata: 'read' },
  },
  repositories: ['app'],
});

t.test('a github_app connection loads; its key is read at call time, never into the result', async (t) => {
  const f = makeFixture(t);
  writeFileSync(join(f.dir, 'app.pem'), PEM, { mode: 0o600 });
  f.config.extensions.github.connection = appConnection();
  const c = await loadConfig(f.write(), { env: f.env });
  t.same(c.extensions.get('github')!.connection, {
    ...appConnection(),
    privateKey: { file: join(f.dir, 'app.pem') },
  });
  t.same(await c.connection('github'), { ...appConnection(), privateKey: PEM.replace(/\n$/, '') });
  t.ok(c.hiddenPaths.includes(join(f.dir, 'app.pem')), 'the key file is hidden from the CLI');
});

t.test('refused where written: a read set that writes, a bad id, an inline key', async (t) => {
  const cases: Record<string, [over: Record<string, unknown>, path: string, code?: string]> = {
    'a read set with a write level': [
      { permissions: { read: { issues: 'write' } } },
      'extensions.github.connection.permissions.read.issues',
    ],
    'an empty write set': [{ permissions: { write: {} } }, 'extensions.github.connection.permissions.write'],
    'an installation id that is not digits': [
      { installationId: 'acme' },
      'extensions.github.connection.installationId',
    ],
    'an empty repository list': [{ repositories: [] }, 'extensions.github.connection.repositories'],
    'the key written inline': [
      { privateKey: PEM },
      'extensions.github.connection.privateKey',
      'CONFIG_SECRET_INLINE',
    ],
  };
  t.plan(Object.keys(cases).length * 2);
  for (const [name, [over, path, code = 'CONFIG_FIELD_INVALID']] of Object.entries(cases)) {
    const f = makeFixture(t);
    writeFileSync(join(f.dir, 'app.pem'), PEM, { mode: 0o600 });
    f.config.extensions.github.connection = { ...appConnection(), ...over };
    const e = await rejection(loadConfig(f.write(), { env: f.env }));
    t.match(e.details, { problems: [{ code, path }] }, name);
    t.notOk(JSON.stringify(e).includes('MII'), `${name}: the key is not quoted`);
  }
});
