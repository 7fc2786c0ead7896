/**
 * A configuration key typo names the key meant: an unknown key that differs from a field of
 * the same object only in case, or by at most two edits, gets `did you mean "<field>"?`;
 * any other unknown key keeps the plain wording. Real files, through `loadConfig` and the
 * bundled program.
 */
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config/index.js';
import type { ConfigProblem } from '../../src/config/index.js';
import { closestKey, editDistance } from '../../src/config/did-you-mean.js';
import { buildBinary, spawnWith } from '../cli/fixtures/helpers.js';
import { makeFixture, rejection } from './fixtures.js';

const { bin } = await buildBinary();
t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));

const problems = (e: { details?: Record<string, unknown> }): ConfigProblem[] =>
  (e.details?.['problems'] ?? []) as ConfigProblem[];

t.test('an unknown key close to a known one at its level says which one was meant', async (t) => {
  const f = makeFixture(t);
  f.config.deadlineSecond = 30; // one letter short, at the top level
  f.config.images.gh.Profile = f.config.images.gh.profile; // a case-only difference, in a record's object
  delete f.config.images.gh.profile;
  f.config.extensions.github.endpiont = 'https://ghe.acme.example'; // two letters swapped
  f.config.daemon.sokcetMode = '0600'; // a swap in a nested object
  f.config.organization.flavour = 'x'; // nothing close: the plain wording
  f.config.daemon.ceiling = 'read'; // a key of another level is not suggested here
  const e = await rejection(loadConfig(f.write(), { env: f.env }));
  const unknown = Object.fromEntries(
    problems(e)
      .filter((p) => p.code === 'CONFIG_FIELD_UNKNOWN')
      .map((p) => [p.path, p.message]),
  );
  t.same(unknown, {
    deadlineSecond: 'not a configuration field; did you mean "deadlineSeconds"?',
    'images.gh.Profile': 'not a configuration field; did you mean "profile"?',
    'extensions.github.endpiont': 'not a configuration field; did you mean "endpoint"?',
    'daemon.sokcetMode': 'not a configuration field; did you mean "socketMode"?',
    'organization.flavour': 'not a configuration field (a typo?); docs/config.md lists every field',
    'daemon.ceiling': 'not a configuration field (a typo?); docs/config.md lists every field',
  });

  const r = spawnWith(bin, ['config', 'validate', '--config', f.write(), '--for', 'host'], {
    env: { GH_SECRET: f.secrets.gh },
  });
  t.equal(r.code, 1);
  t.match(r.env, { error: { code: 'CONFIG_INVALID' } });
  const shown = (r.env as unknown as { error: { details: { problems: ConfigProblem[] } } }).error.details
    .problems;
  t.equal(
    shown.find((p) => p.path === 'deadlineSecond')?.message,
    'not a configuration field; did you mean "deadlineSeconds"?',
  );
});

t.test('the closeness rule: case-only, or within two edits and fewer than the key has', async (t) => {
  t.equal(editDistance('sokcet', 'socket'), 1, 'a swap of neighbours is one edit');
  t.equal(closestKey('STORE', ['store', 'strict']), 'store');
  t.equal(closestKey('versoin', ['version']), 'version');
  t.equal(closestKey('abcsion', ['version']), undefined, 'three edits are too many');
  t.equal(closestKey('id', ['ok']), undefined, 'a key rewritten whole is not a typo');
  t.equal(closestKey('x'.repeat(200), ['x']), undefined);
});
