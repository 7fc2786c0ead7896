import t from 'tap';
import * as z from 'zod';
import type { ExtensionManifest } from '../../src/manifest/index.js';
import {
  createGadget,
  createVendorCliGadget,
  defineTool,
  vendorCliGadgets,
  manifestText,
  mcpTools,
  openAiTools,
  anthropicTools,
  toolName,
} from '../../src/cli/index.js';
import { VENDOR_LIMITS_TEXT } from '../../src/cli/vendor.js';
import { inputSchema } from '../../src/cli/validate.js';
import type { AnyTool, Params } from '../../src/cli/types.js';
import { reviewSubmit, runCli, testCli } from './fixtures/helpers.js';

// A tool the shared code has never seen: defined here, and nothing else is edited.
const calls: unknown[] = [];
const notesAdd = defineTool({
  namespace: 'notes',
  name: 'add',
  description: 'Add a note.',
  parameters: {
    title: { type: 'string', describe: 'the title' },
    priority: { type: 'enum', values: ['low', 'high'], default: 'low', describe: 'how urgent' },
    tags: { type: 'array', items: { type: 'string' }, optional: true, cliAliases: ['tag'], describe: 'tags' },
    pretty: { type: 'boolean', optional: true, cliOnly: true, describe: 'indent output' },
    traceId: { type: 'string', optional: true, gadgetOnly: true, describe: 'trace id' },
  },
  examples: [{ params: { title: 'Buy milk', tags: ['home'], priority: 'high' }, comment: 'a tagged note' }],
  outputShape: '{status: "created", updatedAt: string, id: string}',
  run(p, ctx) {
    calls.push({ p, surface: ctx.surface });
    return { status: 'created', updatedAt: new Date(0).toISOString(), id: `n-${p.title.length}` };
  },
});

t.test('a new definition: gadget surface', async (t) => {
  const g = createGadget(notesAdd);
  t.equal(g.name, 'notes_add');
  t.same(g.inputSchema['required'], ['title']);
  t.notOk(
    (g.inputSchema['properties'] as Record<string, unknown>)['pretty'],
    'cliOnly is not in the gadget schema',
  );
  calls.length = 0;
  const ok = await g.invoke({ title: 'x', traceId: 't1' });
  t.same(ok, {
    success: true,
    data: { status: 'created', updatedAt: '1970-01-01T00:00:00.000Z', id: 'n-1' },
  });
  t.same(
    calls,
    [{ p: { title: 'x', traceId: 't1', priority: 'low' }, surface: 'gadget' }],
    'defaults applied',
  );
});

// gadget input → expected error fields
const gadgetErrors: Record<string, [unknown, Record<string, unknown>]> = {
  'missing required': [{}, { type: 'missing-required', flag: 'title', expected: '{"title":"Buy milk"}' }],
  'enum mismatch': [
    { title: 'x', priority: 'urgent' },
    { type: 'enum-mismatch', flag: 'priority', got: '"urgent"' },
  ],
  'unknown key with suggestion': [
    { title: 'x', tittle: 'y' },
    { type: 'unknown-flag', flag: 'tittle', hint: "did you mean 'title'?" },
  ],
  'cliOnly key is unknown to the gadget': [
    { title: 'x', pretty: true },
    { type: 'unknown-flag', flag: 'pretty' },
  ],
  'wrong type': [{ title: 5 }, { type: 'flag-parse', flag: 'title', got: '5' }],
  'wrong item type names the path': [
    { title: 'x', tags: ['a', 3] },
    { type: 'flag-parse', flag: 'tags[1]' },
  ],
  'not an object': [null, { type: 'flag-parse' }],
};

t.test('gadget validation errors map to the envelope fields', async (t) => {
  const g = createGadget(notesAdd);
  t.plan(Object.keys(gadgetErrors).length);
  for (const [name, [input, want]] of Object.entries(gadgetErrors)) {
    const r = await g.invoke(input);
    const err = r.success ? {} : (r.error as unknown as Record<string, unknown>);
    const got: Record<string, unknown> = {};
    for (const k of Object.keys(want)) got[k] = err[k];
    t.same(got, want, name);
  }
});

t.test('a new definition: CLI surface', async (t) => {
  const cli = testCli([notesAdd]);
  calls.length = 0;
  const r = await runCli(cli, [
    'notes',
    'add',
    '--title',
    'Buy milk',
    '--tag',
    'home',
    '--tag',
    'x',
    '--pretty',
  ]);
  t.equal(r.code, 0, r.stdout);
  t.same(calls, [
    { p: { title: 'Buy milk', tags: ['home', 'x'], pretty: true, priority: 'low' }, surface: 'cli' },
  ]);
  const help = await runCli(cli, ['notes', 'add', '--help']);
  t.match(
    help.stdout,
    "EXAMPLES\n  # a tagged note\n  clibroker notes add --title 'Buy milk' --priority high --tags home\n",
  );
  const gadgetOnly = await runCli(cli, ['notes', 'add', '--title', 'x', '--trace-id', 't']);
  t.match(gadgetOnly.env, { error: { type: 'unknown-flag', flag: 'trace-id' } });
});

t.test('a new definition: manifest surface', async (t) => {
  const text = manifestText([notesAdd]);
  t.match(text, '## clibroker notes add');
  t.match(text, '--tags|--tag <string>');
  t.match(text, "# example: --title 'Buy milk'");
  t.same(mcpTools([notesAdd])[0]?.name, 'notes_add');
  t.same(openAiTools([notesAdd])[0]?.function.parameters, createGadget(notesAdd).inputSchema);
  t.same(anthropicTools([notesAdd])[0]?.input_schema, createGadget(notesAdd).inputSchema);
});

t.test('hand-written JSON Schema agrees with the zod schema', async (t) => {
  const defs: AnyTool[] = [notesAdd, reviewSubmit];
  for (const def of defs) {
    const ours = createGadget(def).inputSchema;
    const theirs = z.toJSONSchema(inputSchema(def, 'gadget'), { io: 'input' }) as Record<string, unknown>;
    t.same(
      Object.keys(ours['properties'] as object),
      Object.keys(theirs['properties'] as object),
      `${def.name}: properties`,
    );
    t.same(
      [...(ours['required'] as string[])].sort(),
      [...((theirs['required'] as string[]) ?? [])].sort(),
      `${def.name}: required`,
    );
  }
});

t.test('core failures: BrokerError credential → auth, anything else → runtime', async (t) => {
  const g = createGadget(reviewSubmit);
  t.match(await g.invoke({ pr: 401, event: 'APPROVE' }), {
    success: false,
    error: { type: 'auth', message: /CREDENTIAL_TOKEN_MINT_FAILED/ },
  });
  t.match(await g.invoke({ pr: 500, event: 'APPROVE' }), {
    success: false,
    error: { type: 'runtime', message: 'review service exploded' },
  });
});

t.test('a declared vendor CLI becomes <id>_cli through the same factory', async (t) => {
  const runs: unknown[] = [];
  const g = createVendorCliGadget({ id: 'gh', description: 'GitHub CLI' }, async (input) => {
    runs.push(input);
    return { exitCode: 0, stdout: 'ok\n', stderr: '' };
  });
  t.equal(g.name, 'gh_cli');
  t.same(g.inputSchema['required'], ['args']);
  t.same(await g.invoke({ args: ['pr', 'list'], stdin: 'in' }), {
    success: true,
    data: { exitCode: 0, stdout: 'ok\n', stderr: '' },
  });
  t.match(await g.invoke({ args: 'pr list' }), {
    success: false,
    error: { type: 'flag-parse', flag: 'args' },
  });
  t.match(await g.invoke({ args: [], cliTier: 'write' }), {
    success: false,
    error: { type: 'unknown-flag', flag: 'cliTier' },
  });
  t.same(runs, [{ args: ['pr', 'list'], stdin: 'in' }], 'invalid calls never reach the run function');
});

t.test('tool names are sanitised to [A-Za-z0-9_-]{1,64} and collisions refused', async (t) => {
  t.equal(toolName('a.b/c d'), 'a_b_c_d');
  t.equal(toolName('x'.repeat(100)).length, 64);
  t.equal(toolName(''), '_');
  const a = defineTool({ ...notesAdd, namespace: 'n', name: 'x' });
  t.throws(() => mcpTools([a, a]), /same name/);
});

t.test('definitions are checked once, at definition time', async (t) => {
  const tool = (name: string, parameters: Params) => () =>
    defineTool({ name, description: 'd', outputShape: '{}', parameters, run: () => 1 });
  t.throws(
    tool('x', { a: { type: 'string', describe: 'a', cliOnly: true, gadgetOnly: true } }),
    /both cliOnly and gadgetOnly/,
  );
  t.throws(tool('Bad Name', {}), /kebab-case/);
  t.throws(
    tool('x', {
      a: { type: 'string', describe: 'a', cliAliases: ['b'] },
      b: { type: 'string', describe: 'b' },
    }),
    /declared twice/,
  );
});

t.test('every CLI of an extension manifest becomes <id>_cli, described from its help tree', async (t) => {
  const ext: Pick<ExtensionManifest, 'clis'> = {
    clis: [
      {
        id: 'gh',
        binary: { image: 'node', entrypoint: 'gh' },
        helpTree: {
          summary: 'Work seamlessly with GitHub.',
          partial: { reason: 'max_depth' },
          commands: [{ name: 'pr', summary: 'pull requests' }, { name: 'issue' }],
        },
      },
      { id: 'az', binary: { image: 'node', entrypoint: 'az' } },
    ],
  };
  const seen: unknown[] = [];
  const gadgets = vendorCliGadgets(ext, (id, input) => {
    seen.push([id, input]);
    return { exitCode: 0 };
  });
  t.same(
    gadgets.map((g) => g.name),
    ['gh_cli', 'az_cli'],
  );
  t.equal(
    gadgets[0]!.description,
    `Work seamlessly with GitHub. Commands: pr (pull requests), issue. The list is partial (max_depth); run 'gh <command> --help' for more. ${VENDOR_LIMITS_TEXT}`,
  );
  t.match(gadgets[1]!.description, /Run the az CLI/);
  await gadgets[1]!.invoke({ args: ['account', 'show'] });
  t.same(seen, [['az', { args: ['account', 'show'] }]]);
  t.same(
    mcpTools(gadgets.map((g) => g.definition)).map((m) => m.name),
    ['gh_cli', 'az_cli'],
    'manifest lists them under the same names',
  );
});
