/**
 * `clibroker agent manifest --config` lists the tools without reading a secret: a missing
 * token file, a loose secret file or an unset variable does not stop it, while a serving
 * load still refuses them. Real files, through `loadConfig` and the bundled program.
 */
import { chmodSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config/index.js';
import type { ConfigProblem } from '../../src/config/index.js';
import { buildBinary, spawnWith } from '../cli/fixtures/helpers.js';
import { makeFixture, rejection } from './fixtures.js';

const { bin } = await buildBinary();
t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));

const problems = (e: { details?: Record<string, unknown> }): ConfigProblem[] =>
  (e.details?.['problems'] ?? []) as ConfigProblem[];

t.test('agent manifest --config lists the tools without reading a secret', async (t) => {
  const f = makeFixture(t);
  const file = f.write();
  // the executor token's file is missing, another secret file is loose, the env secret unset
  rmSync(join(f.dir, 'executor.token'));
  chmodSync(join(f.dir, 'jira.secret'), 0o644);
  const strict = await rejection(loadConfig(file, { env: {} }));
  t.same(
    problems(strict)
      .map((p) => p.code)
      .sort(),
    ['CONFIG_SECRET_FILE_MODE', 'CONFIG_SECRET_MISSING', 'CONFIG_SECRET_MISSING'],
    'the serving load still refuses them',
  );

  const shape = await loadConfig(file, { env: {}, readSecrets: false });
  t.same(
    shape.tools.map((x) => x.name),
    ['gh_cli', 'az_cli', 'curl_cli'],
  );
  await t.rejects(shape.executorToken(), { code: 'CONFIG_SECRET_UNAVAILABLE' }, 'a call still reads it');

  // a malformed reference is still refused: only the values are not read
  f.config.daemon.executorToken = { path: 'executor.token' };
  const bad = await rejection(loadConfig(f.write(), { env: {}, readSecrets: false }));
  t.match(problems(bad), [{ path: 'daemon.executorToken' }]);
  f.config.daemon.executorToken = { file: 'executor.token' };
  f.write();

  const r = spawnWith(bin, ['agent', 'manifest', '--config', file, '--format', 'mcp']);
  t.equal(r.code, 0, r.stderr);
  t.ok(Array.isArray(r.data), 'a tool list');
  for (const x of r.data as { name: string }[]) t.match(x.name, /^(gh|az|curl)_cli$/);
  const text = spawnWith(bin, ['agent', 'manifest', '--config', file]);
  t.equal(text.code, 0, text.stderr);
});
