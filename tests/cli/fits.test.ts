import t from 'tap';
import { run } from '../../src/commands/run.js';
import { vendorRun } from '../../src/commands/vendor.js';
import { fitsAsIs } from '../../src/cli/fits.js';
import { validateInput } from '../../src/cli/validate.js';
import { reviewSubmit } from './fixtures/helpers.js';

// The fast path past zod must agree with the schema: what it takes, the schema takes too
// (with the same result); whatever it does not take goes to the schema.
const big = 'x'.repeat(32 * 1024 + 1);
const manifest = {
  id: 'github',
  egress: ['api.github.com'],
  clis: [{ id: 'gh', binary: { image: 'plain', entrypoint: 'gh' } }],
};
const withProto = JSON.parse('{"id": "github", "__proto__": {"polluted": true}}') as Record<string, unknown>;
const cases: Record<
  string,
  [typeof run | typeof reviewSubmit | typeof vendorRun, Record<string, unknown>, boolean]
> = {
  'run: tool and args': [run, { tool: 'gh_cli', args: ['api', 'user'] }, true],
  'run: with stdin and socket': [run, { tool: 'gh_cli', args: [], stdin: 'x', socket: '/s' }, true],
  'run: an argument over 32 KiB': [run, { tool: 'gh_cli', args: [big] }, false],
  'run: 257 arguments': [run, { tool: 'gh_cli', args: Array.from({ length: 257 }, () => 'a') }, false],
  'run: no tool': [run, { args: [] }, false],
  'run: an unknown key': [run, { tool: 'gh_cli', args: [], cliTier: 'write' }, false],
  'review: defaults applied': [reviewSubmit, { pr: 7, event: 'APPROVE' }, true],
  'review: a JSON parameter goes to the schema': [
    reviewSubmit,
    { pr: 7, event: 'APPROVE', comments: [{ path: 'a', body: 'b' }] },
    false,
  ],
  'review: not an integer': [reviewSubmit, { pr: 7.5, event: 'APPROVE' }, false],
  'vendor run: a free-form JSON object fits as it is': [
    vendorRun,
    { manifest, cli: 'gh', args: ['api'] },
    true,
  ],
  'vendor run: a JSON array is not an object': [
    vendorRun,
    { manifest: [manifest], cli: 'gh', args: [] },
    false,
  ],
  'vendor run: null is not an object': [vendorRun, { manifest: null, cli: 'gh', args: [] }, false],
  'vendor run: an own __proto__ key, which the schema drops, goes to the schema': [
    vendorRun,
    { manifest: withProto, cli: 'gh', args: [] },
    false,
  ],
  'vendor run: a class instance goes to the schema': [
    vendorRun,
    { manifest: new Date(0), cli: 'gh', args: [] },
    false,
  ],
};

t.test('fitsAsIs takes only what the schema takes, with the same result', async (t) => {
  t.plan(Object.keys(cases).length * 2);
  for (const [name, [def, values, fast]] of Object.entries(cases)) {
    const quick = fitsAsIs(def, values);
    t.equal(quick !== undefined, fast, `${name}: ${fast ? 'fast path' : 'to the schema'}`);
    let schema: unknown;
    try {
      schema = validateInput(def, 'cli', values);
    } catch {
      schema = undefined;
    }
    if (quick) t.same(quick, schema, `${name}: the same input as the schema's`);
    else t.pass(`${name}: the schema decides`);
  }
});
