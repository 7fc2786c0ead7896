/**
 * A configuration file that is not JSON: the refusal names the line and column of the
 * syntax error and shows a short excerpt of that line, redacted, so an inline secret next
 * to the error is not repeated. Real files, through `loadConfig` and the bundled program.
 */
import { rmSync, writeFileSync } from 'node:fs';
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

t.test('a JSON syntax error gives its line and column and a redacted excerpt of the line', async (t) => {
  const f = makeFixture(t);
  const file = join(f.dir, 'broken.json');
  writeFileSync(
    file,
    '{\n  "version": 1,\n  "organization": {"ceiling": "read"}\n  "store": ":memory:"\n}\n',
  );
  const e = await rejection(loadConfig(file, { env: f.env }));
  t.match(problems(e), [
    {
      code: 'CONFIG_FIELD_INVALID',
      path: '(root)',
      message:
        /is not JSON \(a syntax error at line 4, column 3, where the line reads: "store": ":memory:"\)$/,
    },
  ]);

  // the secret the operator pasted inline is not repeated, and the excerpt stays short
  const pad = 'x'.repeat(300);
  writeFileSync(
    file,
    `{"version": 1, "pad": "${pad}",\n "daemon": {"executorToken": "${f.secrets.gh}" "socket": "/run/c.sock", "more": "${pad}"}}`,
  );
  const leak = await rejection(loadConfig(file, { env: f.env }));
  const [p] = problems(leak);
  t.match(p?.message, /at line 2, column \d+, where the line reads: .*\[REDACTED\]/);
  t.notOk(p?.message.includes(f.secrets.gh), 'the secret is not shown');
  t.notOk(p?.message.includes(f.secrets.gh.slice(4, 20)), 'nor a part of it');
  const excerpt = p?.message.split('where the line reads: ')[1] ?? '';
  t.ok(excerpt.length <= 81, `the excerpt is capped (${excerpt.length})`);

  // a file that ends too early: its last line
  writeFileSync(file, '{"version": 1,\n "store": ');
  t.match(problems(await rejection(loadConfig(file, { env: f.env })))[0]?.message, /at line 2, column 11/);

  const r = spawnWith(bin, ['config', 'validate', '--config', file, '--for', 'host']);
  t.equal(r.code, 1);
  t.match(r.env, { error: { details: { problems: [{ message: /syntax error at line 2, column 11/ }] } } });
});
