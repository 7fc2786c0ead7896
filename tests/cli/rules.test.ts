/**
 * The factory's own rules, each checked through the spawned binary (bin/clibroker.js and the
 * esbuild bundle, as agents run it): how much input an envelope repeats, what `expected` says
 * about an enum, a path typed where JSON goes, a topic typo before an unknown command, a short
 * flag named as typed, suggestions drawn only from what the surface offers, what `-file`
 * flags are for, and the shape of a mutation's result.
 */
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import t from 'tap';
import type { EnvelopeError } from '../../src/cli/types.js';
import { buildBinary, spawnWith } from './fixtures/helpers.js';

const { bin } = await buildBinary();
t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));

/** The failure's error fields (an empty object when the invocation succeeded). */
function errorOf(r: ReturnType<typeof spawnWith>): Partial<EnvelopeError> {
  return r.env && !r.env.success ? r.env.error : {};
}

const LONG = `${'A'.repeat(150)} tail ${'b'.repeat(150)}`;

// where the long input goes → argv
const longInputs: Record<string, string[]> = {
  'a JSON value': ['policy', 'classify', '--method', 'POST', '--url', '/x', '--overrides', `{${LONG}`],
  'an unknown flag': ['policy', 'classify', `--${'x'.repeat(300)}`],
  'a stray word': ['policy', 'classify', '--method', 'GET', '--url', '/x', LONG],
  'an enum value': ['agent', 'manifest', '--format', LONG],
  'a number': ['audit', 'query', '--limit', LONG],
};

t.test('got repeats at most 80 characters of the input, and says it cut and how long it was', async (t) => {
  t.plan(Object.keys(longInputs).length * 3);
  for (const [where, argv] of Object.entries(longInputs)) {
    const got = errorOf(spawnWith(bin, argv)).got ?? '';
    const cut = /^([\s\S]*)… \((\d+) chars\)$/.exec(got);
    t.ok(cut, `${where}: the cut is marked (${got})`);
    t.ok((cut?.[1] ?? got).length <= 80, `${where}: ${cut?.[1]?.length} characters kept`);
    t.ok(Number(cut?.[2]) > 80, `${where}: the original length is given`);
  }
});
