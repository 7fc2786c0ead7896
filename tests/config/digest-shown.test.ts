/**
 * A refused configuration shows the sha256 the loader found (of a pinned program, of a
 * manifest) so the operator can review and pin it: a 64-hex digest looks like a secret to the
 * redactor, but one the loader computed itself is not one. Any other secret-shaped value,
 * another 64-hex string included, is still redacted.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import t from 'tap';
import { redactSecrets } from '../../src/audit/secret-shape.js';
import { loadConfig } from '../../src/config/index.js';
import type { ConfigProblem } from '../../src/config/index.js';
import { buildBinary, spawnWith } from '../cli/fixtures/helpers.js';
import { makeFixture, rejection, sha256Of } from './fixtures.js';

const { bin } = await buildBinary();
t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));

t.test('the found sha256 of a pinned program and of a manifest is shown, not [REDACTED]', async (t) => {
  const f = makeFixture(t);
  writeFileSync(f.exe('gh'), '#!/bin/sh\necho a newer gh\n');
  const exeSha = sha256Of('#!/bin/sh\necho a newer gh\n');
  const manifestSha = f.config.extensions.azure.sha256 as string;
  f.config.extensions.azure.sha256 = 'f'.repeat(64);
  const file = f.write();
  const e = await rejection(loadConfig(file, { env: f.env }));
  const byPath = new Map(((e.details?.['problems'] ?? []) as ConfigProblem[]).map((p) => [p.path, p]));
  t.match(byPath.get('images.gh.sha256'), {
    code: 'CONFIG_IMAGE_HASH_MISMATCH',
    message: new RegExp(`has sha256 ${exeSha},`),
  });
  t.match(byPath.get('extensions.azure.sha256'), {
    code: 'CONFIG_MANIFEST_HASH_MISMATCH',
    message: new RegExp(`has sha256 ${manifestSha},`),
  });

  const r = spawnWith(bin, ['config', 'validate', '--config', file, '--for', 'host'], {
    env: { GH_SECRET: f.secrets.gh },
  });
  t.equal(r.code, 1);
  const shown = (r.env as unknown as { error: { details: { problems: ConfigProblem[] } } }).error.details
    .problems;
  const msg = (path: string) => shown.find((p) => p.path === path)?.message ?? '';
  t.match(
    msg('images.gh.sha256'),
    new RegExp(`has sha256 ${exeSha},`),
    'the program digest, through the envelope',
  );
  t.match(
    msg('extensions.azure.sha256'),
    new RegExp(`has sha256 ${manifestSha},`),
    'the manifest digest, too',
  );
  for (const s of Object.values(f.secrets))
    t.notOk(r.stdout.includes(s) || r.stderr.includes(s), 'no secret');
});

t.test('another 64-hex value, and a secret, are still redacted', async (t) => {
  const other = sha256Of('not computed by the loader');
  t.equal(redactSecrets(`token ${other}`), 'token [REDACTED]');
  t.equal(redactSecrets(`ghp_${'a1B2c3D4'.repeat(4)}`), '[REDACTED]');
});
