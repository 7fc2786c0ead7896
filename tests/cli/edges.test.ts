/**
 * The agent-facing edge cases: help routing, --help over parse errors, vendor arguments
 * without --, the typed command in `got`, numbers out of range, examples whose values start
 * with -- or span lines, and the limits of the `<id>_cli` gadget.
 */
import { execFileSync } from 'node:child_process';
import t from 'tap';
import { parseArgv } from '../../src/cli/argv.js';
import { BUNDLED_TOOLS } from '../../src/commands/index.js';
import { defineTool } from '../../src/cli/define.js';
import { createGadget } from '../../src/cli/gadget.js';
import { commandHelp } from '../../src/cli/help.js';
import { manifestText } from '../../src/cli/manifest.js';
import { jsonSchema } from '../../src/cli/schema.js';
import { renderExample } from '../../src/cli/shell.js';
import type { AnyTool, EnvelopeError } from '../../src/cli/types.js';
import { createVendorCliGadget } from '../../src/cli/vendor.js';
import { TEST_TOOLS, runCli, testCli } from './fixtures/helpers.js';

const cli = testCli([...TEST_TOOLS, ...BUNDLED_TOOLS]);
const M = JSON.stringify({
  id: 'github',
  egress: ['api.github.com'],
  clis: [{ id: 'gh', binary: { image: 'plain', entrypoint: 'gh' } }],
});
const errorOf = (env: unknown) => (env as { error: EnvelopeError }).error;

t.test('help <topic> is the topic page; help <topic> <command> the command page', async (t) => {
  const a = await runCli(cli, ['help', 'vendor']);
  const b = await runCli(cli, ['vendor', '--help']);
  t.equal(a.code, 0);
  t.equal(a.stdout, b.stdout);
  t.match(a.stdout, /vendor run/);
  t.equal(
    (await runCli(cli, ['help', 'vendor', 'run'])).stdout,
    (await runCli(cli, ['vendor', 'run', '--help'])).stdout,
  );
  t.equal((await runCli(cli, ['help'])).stdout, (await runCli(cli, ['--help'])).stdout);
  const typo = await runCli(cli, ['help', 'vendr']);
  t.equal(typo.code, 2);
  t.match(errorOf(typo.env), { type: 'unknown-command', got: 'vendr' });
});

t.test('--help anywhere before -- wins over every parse error', async (t) => {
  const page = (await runCli(cli, ['review', 'submit', '--help'])).stdout;
  const cases = [
    ['review', 'submit', '--pr', 'abc', '--help'],
    ['review', 'submit', '--bogus', '--help'],
    ['review', 'submit', '--comments', '{bad', '-h'],
    ['review', 'submit', 'stray', '--help'],
    ['review', 'submit', '--help', '--pr'],
    ['review', 'submit', '--event', 'NOPE', '--pr', '1', '--help'],
  ];
  for (const argv of cases) {
    const r = await runCli(cli, argv);
    t.equal(r.code, 0, argv.join(' '));
    t.equal(r.stdout, page, `${argv.join(' ')}: the command page`);
    t.equal(r.stderr, '');
  }
  const topic = await runCli(cli, ['vendor', '--cli', 'gh', '--help']);
  t.equal(topic.code, 0);
  t.match(topic.stdout, /clibroker vendor — commands/);
  // after --, --help belongs to the vendor CLI
  t.same(parseArgv(BUNDLED_TOOLS[0]!, ['--cli', 'gh', '--', 'pr', '--help']).values, {
    cli: 'gh',
    args: ['pr', '--help'],
  });
});

t.test('vendor arguments without -- are told to go after it, and retry moves them there', async (t) => {
  const cases: [string[], string][] = [
    [['vendor', 'run', '--manifest', M, '--cli', 'gh', 'pr', 'list'], '-- pr list'],
    [['vendor', 'run', '--manifest', M, '--cli', 'gh', '-X', 'GET', '/user'], '-- -X GET /user'],
    [
      ['vendor', 'run', '--manifest', M, '--cli', 'gh', 'api', '--paginate', '--tier', 'write'],
      '--tier write -- api --paginate',
    ],
    [['vendor', 'run', '--manifest', M, '--cli', 'gh', 'pr', '--', 'list'], '-- pr list'],
  ];
  for (const [argv, tail] of cases) {
    const r = await runCli(cli, argv);
    const e = errorOf(r.env);
    t.match(e.hint, /after --/, argv.join(' '));
    t.ok(e.retry?.endsWith(tail), `${e.retry} ends with ${tail}`);
  }
});

t.test('an unknown command has the command as typed in got', async (t) => {
  for (const [argv, got] of [
    [['vendor', 'urn'], 'vendor urn'],
    [['vendr', 'urn', '--cli', 'x'], 'vendr urn'],
    [['vendor', 'explode'], 'vendor explode'],
    [['zzz'], 'zzz'],
  ] as const) {
    const r = await runCli(cli, [...argv]);
    t.equal(r.code, 2);
    t.equal(errorOf(r.env).got, got, argv.join(' '));
  }
  const far = errorOf((await runCli(cli, ['polcy', 'explain'])).env);
  t.match(
    far.hint,
    /^did you mean 'clibroker policy explain'\? \(the topic corrected; 'policy' has no 'explain', it has: classify\)$/,
    'a topic typo with an unknown command keeps the command as typed and lists what the topic has',
  );
  t.equal(far.retry, undefined, 'never a retry to a command that does not exist');
});

t.test('an out-of-range number is a flag-scoped envelope with an example, on both surfaces', async (t) => {
  for (const [argv, flag] of [
    [['vendor', 'run', '--manifest', M, '--cli', 'gh', '--deadline', '999', '--', 'x'], 'deadline'],
    [['vendor', 'run', '--manifest', M, '--cli', 'gh', '--deadline=0', '--', 'x'], 'deadline'],
    [['approvals', 'list', '--limit', '0'], 'limit'],
    [['audit', 'query', '--limit', '10001'], 'limit'],
  ] as const) {
    const r = await runCli(cli, [...argv]);
    const e = errorOf(r.env);
    t.match(
      e,
      { type: 'flag-parse', flag, message: /must be 1\.\./, example: /^clibroker / },
      argv.join(' '),
    );
    t.match(e.retry, new RegExp(`--${flag}[ =](270|1|10000)\\b`));
  }
  const g = createGadget(BUNDLED_TOOLS[0]!);
  const env = await g.invoke({ manifest: {}, cli: 'gh', args: [], deadline: 999 });
  t.match(env, { success: false, error: { type: 'flag-parse', flag: 'deadline' } });
  t.match(jsonSchema(BUNDLED_TOOLS[0]!, 'gadget'), {
    properties: { deadline: { minimum: 1, maximum: 270 } },
  });
});

// A tool whose example values start with -- and span lines.
const notes = defineTool({
  namespace: 'notes',
  name: 'add',
  description: 'Add a note.',
  parameters: {
    text: { type: 'string', describe: 'the note' },
    tag: { type: 'array', items: { type: 'string' }, optional: true, describe: 'tags' },
    sep: { type: 'string', optional: true, describe: 'a separator' },
  },
  examples: [
    {
      params: { text: 'first line\nsecond line\tand a tab', tag: ['--urgent', "it's"], sep: '--' },
      comment: 'a multi-line note',
    },
    { params: { text: '--help is not help here\r\n\u001b[0m' }, comment: 'control characters' },
  ],
  outputShape: '{ok: true}',
  run: () => ({ ok: true }),
}) as unknown as AnyTool;

function bashWords(line: string): string[] {
  const out = execFileSync('bash', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' });
  return out.split('\0').slice(0, -1);
}

t.test("examples stay one balanced, runnable line: --flag=--value and $'…' for line breaks", async (t) => {
  const first = renderExample('clibroker', notes, notes.examples![0]!.params);
  t.equal(
    first,
    "clibroker notes add --text $'first line\\nsecond line\\tand a tab' --tag=--urgent --tag 'it'\\''s' --sep=--",
  );
  for (const ex of notes.examples!) {
    const line = renderExample('clibroker', notes, ex.params);
    t.notMatch(line, /[\n\r\u001b]/, 'one line, no raw control characters');
    t.same(
      parseArgv(notes, bashWords(line).slice(3)).values,
      ex.params,
      `${ex.comment}: round-trips through bash`,
    );
  }
  for (const page of [commandHelp('clibroker', notes), manifestText([notes])]) {
    // every `# example` line and every EXAMPLES command (not the USAGE line with its placeholders)
    for (const l of page
      .split('\n')
      .filter((x) => /# example|^\s*clibroker notes add/.test(x) && !x.includes('[flags]'))) {
      const cmd = l.replace(/^.*# example(?: \([^)]*\))?: /, '').trim();
      const words = bashWords(cmd.startsWith('clibroker') ? cmd : `clibroker notes add ${cmd}`);
      t.ok(words.length > 3, `balanced: ${l}`);
    }
  }
});

t.test('the <id>_cli gadget states its limits and enforces them before anything runs', async (t) => {
  let calls = 0;
  const g = createVendorCliGadget({ id: 'gh' }, () => {
    calls++;
    return { exitCode: 0 };
  });
  t.match(g.description, /at most 256 arguments of at most 32 KiB each .*stdin at most 1 MiB; no shell/);
  t.match(g.inputSchema, {
    properties: {
      args: { type: 'array', maxItems: 256, items: { type: 'string', maxLength: 32768 } },
      stdin: { type: 'string', maxLength: 1048576 },
    },
  });
  t.match(
    (g.inputSchema as { properties: { args: { description: string } } }).properties.args.description,
    /never through a shell/,
  );
  const refused: [string, unknown][] = [
    ['257 arguments', { args: Array.from({ length: 257 }, () => 'x') }],
    ['an argument of 32 KiB + 1 byte', { args: ['x'.repeat(32 * 1024 + 1)] }],
    ['a multi-byte argument over 32 KiB in UTF-8', { args: ['é'.repeat(16 * 1024 + 1)] }],
    ['stdin over 1 MiB', { args: [], stdin: 'x'.repeat(1024 * 1024 + 1) }],
  ];
  for (const [name, input] of refused) {
    const env = await g.invoke(input);
    t.match(env, { success: false, error: { type: 'flag-parse', flag: /^(args|stdin)/ } }, name);
    t.ok(JSON.stringify(env).length < 2000, `${name}: the envelope does not echo the input`);
  }
  t.equal(calls, 0, 'nothing ran');
  const at = await g.invoke({
    args: [...Array.from({ length: 255 }, () => 'x'), 'y'.repeat(32 * 1024)],
    stdin: 'z'.repeat(1024 * 1024),
  });
  t.match(at, { success: true }, 'exactly at every limit is fine');
  t.equal(calls, 1);
});

t.test(
  'a correction never raises what the agent asked for: a forgotten or unknown tier becomes read',
  async (t) => {
    for (const argv of [
      ['vendor', 'run', '--manifest', M, '--tier', '--cli', 'gh', '--', 'pr', 'list'],
      ['vendor', 'run', '--manifest', M, '--cli', 'gh', '--tier', 'admin', '--', 'pr', 'list'],
      ['vendor', 'run', '--manifest', M, '--cli', 'gh', '--tier=everything', '--', 'pr', 'list'],
    ]) {
      const e = errorOf((await runCli(cli, argv)).env);
      t.match(e.retry, /--tier[ =]read\b/, argv.join(' '));
      t.notMatch(e.retry ?? '', /write/, 'the example shows --tier write; the correction does not take it');
    }
  },
);

t.test('--help on a mistyped command: unknown-command, and the retry is the corrected page', async (t) => {
  const r = await runCli(cli, ['vendr', 'run', '--help']);
  t.equal(r.code, 2);
  t.equal(errorOf(r.env).retry, 'clibroker vendor run --help');
});
