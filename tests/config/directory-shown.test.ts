/**
 * A refused configuration names its file, so the operator can find it: a temp directory's
 * random name (`/tmp/clibroker-demo-Q7xK2mZ9`) makes the path look like a key to the
 * redactor, but the directory the operator pointed the process at is not one. A key written
 * after that directory, or one that merely contains its text, is still redacted.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t from 'tap';
import { markOperatorDirectory, redactSecrets } from '../../src/audit/secret-shape.js';
import { buildBinary, spawnWith } from '../cli/fixtures/helpers.js';

const KEY = 'aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF';

t.test('the operator directory is shown, a key after it or around it is not', async (t) => {
  const dir = '/tmp/clibroker-demo-Q7xK2mZ9';
  const path = `${dir}/config.json`;
  t.equal(
    redactSecrets(`the configuration ${path}`),
    'the configuration [REDACTED].json',
    'unmarked: redacted',
  );
  markOperatorDirectory(dir);
  t.equal(redactSecrets(`the configuration ${path}`), `the configuration ${path}`, 'marked: shown');
  t.equal(redactSecrets(`${dir}/${KEY}`), '[REDACTED]', 'a key after the directory');
  t.equal(redactSecrets(`${KEY}${dir}`), '[REDACTED]', 'a key before it');
  t.equal(redactSecrets(`k=${KEY.slice(0, 16)}${dir}${KEY.slice(16)}`), 'k=[REDACTED]', 'a key around it');
  markOperatorDirectory('/tmp/ab');
  t.equal(redactSecrets(`/tmp/ab${KEY}`), '[REDACTED]', 'a directory shorter than 8 characters is not taken');
});

t.test('clibroker config validate names the file it refused', async (t) => {
  const { bin } = await buildBinary();
  t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));
  const parent = mkdtempSync(join(tmpdir(), 'clibroker-dir-'));
  t.teardown(() => rmSync(parent, { recursive: true, force: true }));
  const dir = join(parent, 'clibroker-demo-Q7xK2mZ9');
  mkdirSync(dir);
  const file = join(dir, 'config.json');
  writeFileSync(file, '{"version": 1}');
  const r = spawnWith(bin, ['config', 'validate', '--config', file], {});
  t.equal(r.code, 1);
  t.match(r.env, { success: false, error: { code: 'CONFIG_INVALID' } });
  const message = r.env?.success === false ? r.env.error.message : '';
  t.ok(message.includes(`the configuration ${file} `), message);
});
