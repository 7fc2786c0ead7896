/**
 * The factory's own rules, each checked through the spawned binary (bin/clibroker.js and the
 * esbuild bundle, as agents run it): how much input an envelope repeats, what `expected` says
 * about an enum, a path typed where JSON goes, a topic typo before an unknown command, a short
 * flag named as typed, suggestions drawn only from what the surface offers, what `-file`
 * flags are for, and the shape of a mutation's result.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import t from 'tap';
import type { EnvelopeError } from '../../src/cli/types.js';
import { BUNDLED_TOOLS } from '../../src/commands/index.js';
import { tiersSet } from '../../src/commands/tiers.js';
import { AUDIT_EVENT_TYPES } from '../../src/commands/audit.js';
import { mutationResult } from '../../src/commands/mutation.js';
import { exampleArgv, renderExample } from '../../src/cli/shell.js';
import { isBrokerError } from '../../src/errors.js';
import { TEST_TOOLS, buildBinary, reviewSubmit, spawnWith } from './fixtures/helpers.js';

const { bin } = await buildBinary();
// the test tools through the same factory: review submit answers with what it was given
const { bin: fixture } = await buildBinary('tests/cli/fixtures/test-cli.ts');
t.teardown(() => {
  for (const b of [bin, fixture]) rmSync(dirname(dirname(b)), { recursive: true, force: true });
});

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

// argv → [the flag as typed, what the hint says]
const shortFlags: Record<string, [string[], string, RegExp | undefined]> = {
  'a short flag the command does not have': [
    ['policy', 'classify', '-m', 'GET', '--url', '/x'],
    '-m',
    undefined,
  ],
  'a short flag with an inline value': [['policy', 'classify', '-m=GET', '--url', '/x'], '-m', undefined],
  'a long flag typed with one dash': [
    ['policy', 'classify', '-method', 'GET', '--url', '/x'],
    '-method',
    /^did you mean --method\?$/,
  ],
  'a short flag before the vendor arguments': [
    ['run', 'gh_cli', '-R', 'o/r', '--', 'api'],
    '-R',
    /^if -R is the vendor CLI's flag/,
  ],
};

t.test('a short flag is named as typed in flag, message, hint and the stderr line', async (t) => {
  t.plan(Object.keys(shortFlags).length * 5);
  for (const [name, [argv, typed, hint]] of Object.entries(shortFlags)) {
    const r = spawnWith(bin, argv);
    const e = errorOf(r);
    t.equal(e.type, 'unknown-flag', `${name}: unknown-flag`);
    t.equal(e.flag, typed, `${name}: flag`);
    t.equal(e.message, `unknown flag ${typed}`, `${name}: message`);
    if (hint) t.match(e.hint, hint, `${name}: hint`);
    else t.equal(e.hint, undefined, `${name}: no hint`);
    t.match(r.stderr, `unknown-flag (${typed}): unknown flag ${typed}`, `${name}: the stderr line`);
  }
});

const { tier: _tier, ...withoutTier } = tiersSet.examples![0]!.params as Record<string, unknown>;

const EVENT_TYPES = [...AUDIT_EVENT_TYPES];

// what went wrong → [argv, the allowed values]
const enumFlags: Record<string, [string[], string[]]> = {
  'a value outside the enum': [
    ['agent', 'manifest', '--format', 'xml'],
    ['text', 'mcp', 'openai', 'anthropic'],
  ],
  'a forgotten value': [
    ['audit', 'query', '--decision'],
    ['allow', 'deny'],
  ],
  // the command's own example without its required --tier
  'a missing required enum': [
    ['tiers', 'set', ...exampleArgv(tiersSet, withoutTier)],
    ['read', 'write'],
  ],
  'a repeatable enum flag, a value outside it': [['audit', 'query', '--type', 'egress.maybe'], EVENT_TYPES],
  'a repeatable enum flag, a forgotten value': [['audit', 'query', '--type'], EVENT_TYPES],
};

t.test('expected for an enum-typed flag lists every allowed value', async (t) => {
  t.plan(Object.keys(enumFlags).length);
  for (const [name, [argv, values]] of Object.entries(enumFlags)) {
    const e = errorOf(spawnWith(bin, argv));
    t.match(e.expected, `one of: ${values.join(', ')}`, `${name}: ${e.expected}`);
  }
});

// argv (the JSON flag given a path) → [the file flag the hint names, the path the retry passes]
const pathsForJson: Record<string, [string[], string, string]> = {
  'a relative path': [
    ['policy', 'classify', '--method', 'POST', '--url', '/x', '--overrides', './payload.json'],
    'overrides-file',
    './payload.json',
  ],
  'a bare file name': [
    ['manifest', 'validate', '--manifest', 'manifest.json'],
    'manifest-file',
    'manifest.json',
  ],
  'an absolute path, inline': [
    ['policy', 'classify', '--method', 'POST', '--url', '/x', '--overrides=/tmp/o.json'],
    'overrides-file',
    '/tmp/o.json',
  ],
  'curl style @file': [
    ['policy', 'classify', '--method', 'POST', '--url', '/x', '--override', '@rules.json'],
    'overrides-file',
    'rules.json',
  ],
};

t.test('a file path typed where JSON goes: the hint names the -file flag, and retry uses it', async (t) => {
  t.plan(Object.keys(pathsForJson).length * 3);
  for (const [name, [argv, fileFlag, path]] of Object.entries(pathsForJson)) {
    const e = errorOf(spawnWith(bin, argv));
    t.equal(e.type, 'json-parse', `${name}: json-parse`);
    t.match(e.hint, `--${fileFlag}`, `${name}: the hint names --${fileFlag} (${e.hint})`);
    t.match(e.retry, ` --${fileFlag} ${path}`, `${name}: retry reads the file (${e.retry})`);
  }
});

t.test('the retry for a path typed where JSON goes reads that file and succeeds', async (t) => {
  const { mkdirSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  // not mkdtemp: a random directory name can read as a secret-shaped run, and a retry that
  // would need redacting is never offered
  const dir = join(tmpdir(), `clibroker-rules-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'overrides.json');
  writeFileSync(file, '[{"match":{"method":"POST"},"wireClass":"destructive"}]\n');
  const base = ['policy', 'classify', '--method', 'POST', '--url', '/repos/o/r/issues/1/lock'];
  const e = errorOf(spawnWith(bin, [...base, '--overrides', file]));
  t.equal(e.retry, `clibroker ${base.join(' ')} --overrides-file ${file}`);
  const again = spawnWith(bin, [...base, '--overrides-file', file]);
  t.match(again.data, { class: 'destructive', overridesApplied: [0] });
});

t.test('a topic typo before an unknown command keeps the rest of the command', async (t) => {
  const e = errorOf(spawnWith(bin, ['vednor', 'frobnicate', '--cli', 'gh']));
  t.equal(e.type, 'unknown-command');
  t.equal(e.got, 'vednor frobnicate');
  t.match(e.hint, "did you mean 'clibroker vendor frobnicate'?", `${e.hint}`);
  t.match(e.hint, 'run, resume', 'and says what the topic has');
  // the corrected topic with a command it does not have would fail again: no retry
  t.equal(e.retry, undefined);
  const near = errorOf(spawnWith(bin, ['vednor', 'rnu', '--cli', 'gh']));
  t.match(near.hint, "did you mean 'clibroker vendor run'?", 'a near command is still corrected');
  t.match(near.retry, /^clibroker vendor run --cli gh/);
});

const AGENT = { CLIBROKER_SURFACE: 'agent' };
const OPERATOR_TOPICS =
  /\b(vendor|approvals|tiers|store|audit|config|doctor|conformance|daemon|serve|helptree|manifest|agent|demo)\b/;

// argv → what the agent-facing envelope may still suggest (undefined: nothing)
const agentTypos: Record<string, [string[], RegExp | undefined]> = {
  'an operator topic, typed close': [['aprovals', 'approve', '--id', 'x'], undefined],
  'an operator topic, exactly, with a command typo': [['approvals', 'aprove', '--id', 'x'], undefined],
  'an operator topic alone': [['tiers'], undefined],
  'an operator command before its topic': [['set', 'tiers'], undefined],
  'an agent command typo': [['rnu', 'gh_cli', '--', 'api'], /clibroker run gh_cli/],
  'an agent topic typo': [['polcy', 'clasify'], /clibroker policy classify/],
};

t.test(
  'on the agent-facing surface, unknown-command envelopes name only what agent manifest offers',
  async (t) => {
    const manifest = spawnWith(bin, ['agent', 'manifest']).data as string;
    const offered = [...manifest.matchAll(/^## clibroker (\w+)/gm)].map((m) => m[1]);
    t.same([...new Set(offered)], ['run', 'resume', 'policy'], 'what agent manifest offers');
    for (const [name, [argv, suggests]] of Object.entries(agentTypos)) {
      const r = spawnWith(bin, argv, { env: AGENT });
      const e = errorOf(r);
      t.equal(e.type, 'unknown-command', `${name}: unknown-command`);
      t.equal(e.expected, 'policy, run, resume', `${name}: expected lists the offered commands`);
      const said = `${e.message} ${e.hint ?? ''} ${e.retry ?? ''} ${e.example ?? ''} ${r.stderr.replace(/^clibroker: /, '')}`;
      // the agent's own words are quoted back; nothing else may name an operator command
      t.notMatch(
        said.split(e.got ?? '\0').join(''),
        OPERATOR_TOPICS,
        `${name}: no operator command named (${said})`,
      );
      if (suggests) t.match(e.hint, suggests, `${name}: ${e.hint}`);
      else t.equal(e.hint, undefined, `${name}: no suggestion`);
    }
    // exact commands still run: the surface decides what is suggested, not what exists
    const exact = spawnWith(bin, ['approvals', 'list', '--store', '/nonexistent/store.db'], { env: AGENT });
    t.match(errorOf(exact), { code: 'STORE_NOT_FOUND' }, 'an operator command typed exactly still runs');
    // and the operator's surface (the default) keeps every topic
    t.match(errorOf(spawnWith(bin, ['aprovals', 'list'])).hint, "did you mean 'clibroker approvals list'?");
  },
);

/** Run a rendered example through bash, with `clibroker` being the spawned program. */
function bashRun(program: string, line: string) {
  const r = spawnSync('bash', ['-c', `clibroker() { "$NODE" "$PROGRAM" "$@"; }\n${line}`], {
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', NODE: process.execPath, PROGRAM: program },
  });
  return { code: r.status, data: (JSON.parse(r.stdout) as { data?: Record<string, unknown> }).data };
}

t.test('-file flags say what they are for, in help and in the agent manifest', async (t) => {
  const help = spawnWith(bin, ['policy', 'classify', '--help']).stdout;
  const manifest = spawnWith(bin, ['agent', 'manifest']).data as string;
  for (const [where, text] of [
    ['help', help],
    ['manifest', manifest],
  ] as const) {
    for (const flag of ['--body-file', '--overrides-file']) {
      const block = text
        .slice(text.indexOf(`${flag} <path|->`))
        .split('\n')
        .slice(0, 2)
        .join(' ');
      t.match(block, /- reads stdin/, `${where}: ${flag} says - reads stdin`);
      t.match(block, /the shell never sees/i, `${where}: ${flag} says the shell never sees the content`);
      t.match(block, /multi-line text, markdown, backticks/, `${where}: ${flag} names what passes through`);
      t.match(block, /\$\(…\)/, `${where}: ${flag} names $(…)`);
    }
    t.match(text, "--body-file - <<'EOF'\n", `${where}: an example feeds --body-file from a heredoc`);
  }
});

t.test(
  'every command with a text parameter has an example that passes it through its -file flag',
  async (t) => {
    for (const def of [...TEST_TOOLS, ...BUNDLED_TOOLS]) {
      const text = (def.cli?.fileInputAlternatives ?? []).filter((f) => f.parseAs === 'text');
      if (!text.length) continue;
      const uses = (def.examples ?? []).some((ex) => text.some((f) => f.paramName === ex.viaFile));
      const name = [def.namespace, def.name].filter(Boolean).join(' ');
      t.ok(uses, `${name}: an example uses --${text[0]!.fileFlag}`);
    }
  },
);

t.test(
  'a heredoc example runs through bash as written: backticks, $(…) and lines arrive intact',
  async (t) => {
    const ex = reviewSubmit.examples!.find((e) => e.viaFile === 'body')!;
    const line = renderExample('clibroker', reviewSubmit, ex.params);
    t.match(line, /^clibroker review submit .*--body-file - <<'EOF'\n[\s\S]*\nEOF$/);
    const r = bashRun(fixture, line);
    t.equal(r.code, 0);
    t.equal(
      (r.data?.['echo'] as { body?: string } | undefined)?.body,
      ex.params.body,
      'the body, byte for byte',
    );
    t.match(ex.params.body, /`[^`]+`/, 'the body holds backticks');
    t.match(ex.params.body, /\$\(/, 'and $(…)');
    const policy = BUNDLED_TOOLS.find((d) => d.namespace === 'policy')!;
    const pex = policy.examples!.find((e) => e.viaFile === 'body')!;
    const classified = bashRun(bin, renderExample('clibroker', policy, pex.params));
    t.equal(classified.code, 0, 'the bundled example runs');
    t.match(classified.data, { class: String });
  },
);

/** An ISO 8601 time a reader can parse: what every mutation's updatedAt must be. */
function isIsoTime(x: unknown): boolean {
  return (
    typeof x === 'string' &&
    !Number.isNaN(Date.parse(x)) &&
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(x)
  );
}

// updatedAt given → what the result carries (undefined: refused with INTERNAL_ERROR)
const times: Record<string, [string | Date | undefined, string | undefined]> = {
  "the store's ISO time": ['2025-01-01T12:00:00.000Z', '2025-01-01T12:00:00.000Z'],
  'an offset is written in UTC': ['2025-01-01T13:00:00+01:00', '2025-01-01T12:00:00.000Z'],
  'a Date': [new Date(Date.UTC(2025, 0, 1, 12)), '2025-01-01T12:00:00.000Z'],
  missing: [undefined, undefined],
  empty: ['', undefined],
  'not a time': ['yesterday', undefined],
  'a date without a time': ['2025-01-01', undefined],
  'an impossible date': ['2025-13-45T99:00:00Z', undefined],
  'an invalid Date': [new Date(Number.NaN), undefined],
};

t.test('one helper builds every mutation result, and refuses a time nobody can read', async (t) => {
  t.plan(Object.keys(times).length);
  for (const [name, [given, want]] of Object.entries(times)) {
    let got: unknown;
    try {
      got = mutationResult('changed', given, { id: 'x' });
    } catch (e) {
      got = isBrokerError(e) ? e.code : e;
    }
    t.same(
      got,
      want === undefined ? 'INTERNAL_ERROR' : { status: 'changed', updatedAt: want, id: 'x' },
      name,
    );
  }
});

t.test('tiers set answers {status, updatedAt, …ids} with updatedAt an ISO 8601 time', async (t) => {
  const { mkdirSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = join(tmpdir(), `clibroker-tiers-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // the command's own example (it raises a switch), against a new store
  const example = tiersSet.examples![0]!;
  const argv = ['tiers', 'set', ...exampleArgv(tiersSet, example.params), '--store', join(dir, 's.db')];
  for (const status of ['changed', 'unchanged']) {
    const r = spawnWith(bin, argv);
    t.equal(r.code, 0, r.stderr);
    t.same(
      Object.keys(r.data ?? {}).slice(0, 2),
      ['status', 'updatedAt'],
      `${status}: status and updatedAt first`,
    );
    t.equal(r.data?.status, status);
    t.ok(isIsoTime(r.data?.updatedAt), `${status}: updatedAt ${r.data?.updatedAt} is ISO 8601`);
    t.match(r.data, { extension: example.params.extension, tier: example.params.tier });
  }
});
