/**
 * The argv tokenizer's steps and mistake recognisers, each alone: for every recogniser, the
 * words that are its mistake (with the exact coded problem and retry words) and words that
 * are not (it answers nothing). The whole tokenizer is tested in argv.test.ts and, through
 * the binary, by the agent-mistake corpora.
 */
import t from 'tap';
import {
  type ArgvProblem,
  argumentsAfterSeparator,
  dashedValue,
  flagAndValueInOneWord,
  leftoverLineBreak,
  misspelledFlag,
  missingValue,
  negatedFlagWithValue,
  notABooleanWord,
  notANumber,
  notAnEnumValue,
  outOfRange,
  refuse,
  repeatedFlag,
  strayWord,
  typographicDash,
  unknownFlag,
  vendorFlagBeforeSeparator,
  vendorWordBeforeSeparator,
} from '../../src/cli/argv-mistakes.js';
import {
  type FlagUse,
  type FlagWord,
  flagUse,
  flagWord,
  type Scan,
  startScan,
} from '../../src/cli/argv-words.js';
import { readWord } from '../../src/cli/argv.js';
import { defineTool } from '../../src/cli/define.js';
import { CliFailure } from '../../src/cli/envelope.js';
import type { AnyTool } from '../../src/cli/types.js';
import { reviewSubmit } from './fixtures/helpers.js';

const review = reviewSubmit as unknown as AnyTool;
/** A command that takes one bare word and passes the words after `--` on, like `run`. */
const launch = defineTool({
  name: 'launch',
  description: 'Run a program with arguments.',
  parameters: {
    program: { type: 'string', cliPositional: true, describe: 'the program' },
    times: { type: 'number', integer: true, min: 1, max: 10, optional: true, describe: 'how often' },
    args: {
      type: 'array',
      items: { type: 'string' },
      cliRest: true,
      optional: true,
      describe: 'its arguments',
    },
  },
  examples: [{ params: { program: 'gh', times: 2 }, comment: 'twice' }],
  outputShape: '{}',
  run: () => ({}),
}) as unknown as AnyTool;

const scan = (def: AnyTool, argv: string[]): Scan => startScan(def, argv);
const word = (def: AnyTool, argv: string[], i: number): [Scan, FlagWord] => [
  scan(def, argv),
  flagWord(def, argv, i),
];
/** The known flag at `i`, in a scan that has already read `seen` (parameter → its first words). */
function use(
  def: AnyTool,
  argv: string[],
  i: number,
  seen: Record<string, [string, number, number]> = {},
): [Scan, FlagUse] {
  const s = scan(def, argv);
  for (const [param, [key, at, words]] of Object.entries(seen)) s.seen.set(param, { key, at, words });
  const w = flagWord(def, argv, i);
  if (!w.entry) throw new Error(`${argv[i]} is no flag of ${def.name}`);
  return [s, flagUse({ ...w, entry: w.entry })];
}
const value = (def: AnyTool, param: string, raw: string) => ({
  def,
  param,
  p: def.parameters[param]!,
  raw,
  at: (v: string) => [`--${param}`, v],
});

/** What an unknown flag's refusal lists (flags.ts owns the words). */
const FLAGS =
  '--pr, --event, --body, --body-file, --comments, --comments-file, --labels, --draft, --offset, --meta, --dry-run';

type Case = [() => ArgvProblem | undefined, ArgvProblem | undefined];

// recogniser → { case name → [its answer, the problem expected (undefined: not this mistake)] }
const cases: Record<string, Record<string, Case>> = {
  argumentsAfterSeparator: {
    'our own flag after --: retry drops the --': [
      () => argumentsAfterSeparator(scan(review, ['--', '--pr', '1']), 0),
      {
        type: 'flag-parse',
        message: 'this command takes no arguments after --',
        fields: {
          got: '--pr 1',
          hint: 'every value belongs to a --flag; retry drops the --',
          fix: ['--pr', '1'],
        },
      },
    ],
    'a word after --: no retry (it would drop the word)': [
      () => argumentsAfterSeparator(scan(review, ['--', 'x']), 0),
      {
        type: 'flag-parse',
        message: 'this command takes no arguments after --',
        fields: { got: 'x', hint: 'every value belongs to a --flag: give each word after -- to its flag' },
      },
    ],
    'a command that passes them on': [() => argumentsAfterSeparator(scan(launch, ['--', 'x']), 0), undefined],
  },
  typographicDash: {
    'an em dash flag': [
      () => typographicDash(scan(review, ['—pr', '1']), 0),
      {
        type: 'unknown-flag',
        message: "'—pr' starts with a typographic dash, not two ASCII hyphens",
        fields: {
          flag: 'pr',
          got: '—pr',
          hint: 'flags start with -- (ASCII hyphens); retry writes --pr',
          fix: ['--pr', '1'],
        },
      },
    ],
    'a lone en dash is the separator': [
      () => typographicDash(scan(launch, ['gh', '–', 'api']), 1),
      {
        type: 'flag-parse',
        message: "'–' starts with a typographic dash, not two ASCII hyphens",
        fields: {
          got: '–',
          hint: 'flags start with -- (ASCII hyphens); retry writes --',
          fix: ['gh', '--', 'api'],
        },
      },
    ],
    'ASCII hyphens': [() => typographicDash(scan(review, ['--pr', '1']), 0), undefined],
  },
  leftoverLineBreak: {
    'a line continuation': [
      () => leftoverLineBreak(scan(review, ['--pr', '1', '\\', '--draft']), 2),
      {
        type: 'flag-parse',
        message: "unexpected argument '\\'",
        fields: {
          got: '\\',
          hint: 'a leftover line continuation; retry drops it',
          fix: ['--pr', '1', '--draft'],
        },
      },
    ],
    'a literal \\n': [
      () => leftoverLineBreak(scan(review, ['\\n']), 0),
      {
        type: 'flag-parse',
        message: "unexpected argument '\\n'",
        fields: { got: '\\n', hint: 'a leftover literal \\n; retry drops it', fix: [] },
      },
    ],
    'a word with a backslash in it': [() => leftoverLineBreak(scan(review, ['a\\b']), 0), undefined],
  },
  strayWord: {
    'a bare word where only flags go': [
      () => strayWord(scan(review, ['42']), 0),
      {
        type: 'flag-parse',
        message: "unexpected argument '42'",
        fields: { got: '42', hint: 'every value belongs to a --flag' },
      },
    ],
    'a lone dash': [
      () => strayWord(scan(review, ['-']), 0),
      {
        type: 'flag-parse',
        message: "unexpected argument '-'",
        fields: { got: '-', hint: 'every value belongs to a --flag' },
      },
    ],
    'a flag': [() => strayWord(scan(review, ['--pr']), 0), undefined],
    'the bare word the command takes': [() => strayWord(scan(launch, ['gh']), 0), undefined],
    'where vendor words go (the vendor recogniser answers)': [
      () => strayWord(scan(launch, ['gh', 'api']), 1),
      undefined,
    ],
  },
  vendorWordBeforeSeparator: {
    "the vendor's words before --, with ours among them": [
      () => {
        const s = scan(launch, ['gh', 'api', '--times', '2', 'user']);
        s.seen.set('program', { key: 'program', at: 0, words: 1 });
        return vendorWordBeforeSeparator(s, 1);
      },
      {
        type: 'flag-parse',
        message: "unexpected argument 'api'",
        fields: {
          got: 'api',
          hint: "the vendor CLI's arguments go after --: retry moves them there",
          fix: ['gh', '--times', '2', '--', 'api', 'user'],
        },
      },
    ],
    'the bare word the command takes, not yet given': [
      () => vendorWordBeforeSeparator(scan(launch, ['gh']), 0),
      undefined,
    ],
    'a command without vendor words (the stray recogniser answers)': [
      () => vendorWordBeforeSeparator(scan(review, ['42']), 0),
      undefined,
    ],
  },
  flagAndValueInOneWord: {
    'flag and value quoted together': [
      () => flagAndValueInOneWord(...word(review, ['--pr 42'], 0)),
      {
        type: 'unknown-flag',
        message: 'unknown flag --pr 42: a flag and its value in one word',
        fields: {
          flag: 'pr',
          got: '--pr 42',
          expected: FLAGS,
          hint: 'the shell passed them as one argument (quoted together); give them as separate words: --pr 42',
          fix: ['--pr', '42'],
        },
      },
    ],
    'flag:value': [
      () => flagAndValueInOneWord(...word(review, ['--event:APPROVE'], 0)),
      {
        type: 'unknown-flag',
        message: 'unknown flag --event:APPROVE: a flag and its value in one word',
        fields: {
          flag: 'event',
          got: '--event:APPROVE',
          expected: FLAGS,
          hint: 'the shell passed them as one argument (quoted together); give them as separate words: --event=APPROVE',
          fix: ['--event=APPROVE'],
        },
      },
    ],
    'a word with a space that starts with no flag of ours': [
      () => flagAndValueInOneWord(...word(review, ['--zzz 42'], 0)),
      undefined,
    ],
    'a known flag': [() => flagAndValueInOneWord(...word(review, ['--pr'], 0)), undefined],
  },
  misspelledFlag: {
    'a transposition, its inline value kept': [
      () => misspelledFlag(...word(review, ['--evnet=APPROVE'], 0)),
      {
        type: 'unknown-flag',
        message: 'unknown flag --evnet',
        fields: {
          flag: 'evnet',
          got: '--evnet=…',
          expected: FLAGS,
          hint: 'did you mean --event?',
          fix: ['--event=APPROVE'],
        },
      },
    ],
    'nothing close': [() => misspelledFlag(...word(review, ['--zzzzzz'], 0)), undefined],
    'a known flag': [() => misspelledFlag(...word(review, ['--event'], 0)), undefined],
  },
  vendorFlagBeforeSeparator: {
    "a single-dash flag far from ours, where the vendor's words go": [
      () => vendorFlagBeforeSeparator(...word(launch, ['gh', '-X', 'POST'], 1)),
      {
        type: 'unknown-flag',
        message: 'unknown flag -X',
        fields: {
          flag: '-X',
          got: '-X',
          expected: '--program, --times',
          hint: "if -X is the vendor CLI's flag, it goes after --: retry moves it there",
          fix: ['gh', '--', '-X', 'POST'],
        },
      },
    ],
    'close to one of ours (the misspelling recogniser answers)': [
      () => vendorFlagBeforeSeparator(...word(launch, ['gh', '--tims', '2'], 1)),
      undefined,
    ],
    'a command without vendor words': [
      () => vendorFlagBeforeSeparator(...word(review, ['-X'], 0)),
      undefined,
    ],
  },
  unknownFlag: {
    'nothing to correct it to; the inline value (maybe a secret) not echoed': [
      () => unknownFlag(...word(review, ['--connection={"accessToken":"gho_x"}'], 0)),
      {
        type: 'unknown-flag',
        message: 'unknown flag --connection',
        fields: {
          flag: 'connection',
          got: '--connection=…',
          expected: FLAGS,
        },
      },
    ],
  },
  repeatedFlag: {
    'given twice: the last kept': [
      () => repeatedFlag(...use(review, ['--pr', '1', '--pr', '2'], 2, { pr: ['pr', 0, 2] })),
      {
        type: 'flag-parse',
        message: '--pr given more than once',
        fields: { flag: 'pr', hint: 'retry keeps --pr, the last one', fix: ['--pr', '2'] },
      },
    ],
    'directly, then through its file flag: the direct value kept': [
      () => repeatedFlag(...use(review, ['--body', 'x', '--body-file', 'f'], 2, { body: ['body', 0, 2] })),
      {
        type: 'flag-parse',
        message: 'give either --body or --body-file, not both',
        fields: {
          flag: 'body,body-file',
          hint: 'retry keeps --body, the value on the command line',
          fix: ['--body', 'x'],
        },
      },
    ],
    'through its file flag, then directly': [
      () =>
        repeatedFlag(...use(review, ['--body-file', 'f', '--body', 'x'], 2, { body: ['body-file', 0, 2] })),
      {
        type: 'flag-parse',
        message: 'give either --body-file or --body, not both',
        fields: {
          flag: 'body-file,body',
          hint: 'retry keeps --body, the value on the command line',
          fix: ['--body', 'x'],
        },
      },
    ],
    'a flag that repeats by design': [
      () => repeatedFlag(...use(review, ['--label', 'a', '--label', 'b'], 2, { labels: ['label', 0, 2] })),
      undefined,
    ],
    'the first time': [() => repeatedFlag(...use(review, ['--pr', '1'], 0)), undefined],
  },
  missingValue: {
    'the last word': [
      () => missingValue(...use(review, ['--pr', '1', '--body'], 2)),
      {
        type: 'flag-parse',
        message: '--body needs a value',
        fields: {
          flag: 'body',
          expected: describe('body'),
          hint: "give --body a value; retry uses the example's: --body Please fix the tests; they don't run",
          fix: ['--pr', '1', '--body', "Please fix the tests; they don't run"],
        },
      },
    ],
    'followed by another flag of ours': [
      () => missingValue(...use(review, ['--pr', '--event', 'APPROVE'], 0)),
      {
        type: 'flag-parse',
        message: '--pr needs a value, but the next word --event is a flag of this command',
        fields: {
          flag: 'pr',
          got: '--event',
          expected: describe('pr'),
          hint: "give --pr a value; retry uses the example's: --pr 42",
          fix: ['--pr', '42', '--event', 'APPROVE'],
        },
      },
    ],
    'followed by --': [
      () => missingValue(...use(launch, ['gh', '--times', '--', 'api'], 1)),
      {
        type: 'flag-parse',
        message: '--times needs a value, but the next word -- is the start of the vendor arguments',
        fields: {
          flag: 'times',
          got: '--',
          expected: '--times 2',
          hint: "give --times a value; retry uses the example's: --times 2",
          fix: ['gh', '--times', '2', '--', 'api'],
        },
      },
    ],
    'given inline': [() => missingValue(...use(review, ['--body='], 0)), undefined],
    'a value follows': [() => missingValue(...use(review, ['--body', 'x'], 0)), undefined],
    'a boolean takes none': [() => missingValue(...use(review, ['--draft'], 0)), undefined],
  },
  dashedValue: {
    'a value that starts with --': [
      () => dashedValue(...use(review, ['--body', '--not-a-flag'], 0)),
      {
        type: 'flag-parse',
        message: '--body needs a value; --not-a-flag is not a flag of this command',
        fields: {
          flag: 'body',
          got: '--not-a-flag',
          expected: describe('body'),
          hint: 'a value that starts with -- is written --body=--not-a-flag',
          fix: ['--body=--not-a-flag'],
        },
      },
    ],
    'one of our flags (a missing value)': [
      () => dashedValue(...use(review, ['--body', '--draft'], 0)),
      undefined,
    ],
    'a value with one dash': [() => dashedValue(...use(review, ['--body', '-x'], 0)), undefined],
  },
  negatedFlagWithValue: {
    '--no-x=true': [
      () => negatedFlagWithValue(...use(review, ['--no-draft=true'], 0)),
      {
        type: 'flag-parse',
        message: '--no-draft takes no value',
        fields: {
          flag: 'draft',
          got: '--no-draft=true',
          expected: '--draft or --no-draft',
          fix: ['--no-draft'],
        },
      },
    ],
    '--no-x=false means --x': [
      () => negatedFlagWithValue(...use(review, ['--no-draft=false'], 0)),
      {
        type: 'flag-parse',
        message: '--no-draft takes no value',
        fields: {
          flag: 'draft',
          got: '--no-draft=false',
          expected: '--draft or --no-draft',
          fix: ['--draft'],
        },
      },
    ],
    '--no-x alone': [() => negatedFlagWithValue(...use(review, ['--no-draft'], 0)), undefined],
  },
  notABooleanWord: {
    '--x=maybe': [
      () => notABooleanWord(...use(review, ['--draft=maybe'], 0)),
      {
        type: 'flag-parse',
        message: '--draft takes true|false|yes|no|1|0',
        fields: { flag: 'draft', got: 'maybe', expected: '--draft or --no-draft', fix: ['--draft'] },
      },
    ],
    '--x=YES': [() => notABooleanWord(...use(review, ['--draft=YES'], 0)), undefined],
    'a word after the flag is not its value when it is no boolean word': [
      () => notABooleanWord(...use(review, ['--draft', 'maybe'], 0)),
      undefined,
    ],
  },
  notANumber: {
    'a word': [
      () => notANumber(value(review, 'pr', 'twelve')),
      {
        type: 'flag-parse',
        message: '--pr takes an integer',
        fields: { flag: 'pr', got: 'twelve', expected: describe('pr'), fix: ['--pr', '42'] },
      },
    ],
    'a number with separators': [
      () => notANumber(value(review, 'offset', '1,000')),
      {
        type: 'flag-parse',
        message: '--offset takes a number',
        fields: { flag: 'offset', got: '1,000', expected: describe('offset'), fix: ['--offset', '1000'] },
      },
    ],
    'a fraction for an integer': [
      () => notANumber(value(review, 'pr', '1.5')),
      {
        type: 'flag-parse',
        message: '--pr takes an integer',
        fields: { flag: 'pr', got: '1.5', expected: describe('pr'), fix: ['--pr', '1'] },
      },
    ],
    'a negative fraction where fractions go': [() => notANumber(value(review, 'offset', '-0.5')), undefined],
    'not a number flag': [() => notANumber(value(review, 'body', 'twelve')), undefined],
  },
  outOfRange: {
    'above the maximum': [
      () => outOfRange(value(launch, 'times', '11')),
      {
        type: 'flag-parse',
        message: '--times must be 1..10',
        fields: {
          flag: 'times',
          got: '11',
          expected: '--times 10 (1..10)',
          hint: 'retry uses 10, the nearest allowed value',
          fix: ['--times', '10'],
        },
      },
    ],
    'in range': [() => outOfRange(value(launch, 'times', '10')), undefined],
    'no number at all (the number recogniser answers)': [
      () => outOfRange(value(launch, 'times', 'x')),
      undefined,
    ],
  },
  notAnEnumValue: {
    'the wrong case: did you mean': [
      () => notAnEnumValue(value(review, 'event', 'approve')),
      {
        type: 'enum-mismatch',
        message: '--event must be one of APPROVE, REQUEST_CHANGES, COMMENT',
        fields: {
          flag: 'event',
          got: 'approve',
          expected: describe('event'),
          hint: "did you mean '--event APPROVE'?",
          fix: ['--event', 'APPROVE'],
        },
      },
    ],
    'nothing close: the first value': [
      () => notAnEnumValue(value(review, 'event', 'LGTM')),
      {
        type: 'enum-mismatch',
        message: '--event must be one of APPROVE, REQUEST_CHANGES, COMMENT',
        fields: {
          flag: 'event',
          got: 'LGTM',
          expected: describe('event'),
          hint: 'pick one of APPROVE, REQUEST_CHANGES, COMMENT',
          fix: ['--event', 'APPROVE'],
        },
      },
    ],
    'one of the values': [() => notAnEnumValue(value(review, 'event', 'COMMENT')), undefined],
  },
};

/** How a parameter's value is shown to the agent: its example (flags.ts owns the words). */
function describe(param: string): string {
  return (
    {
      body: "--body 'Please fix the tests; they don'\\''t run'",
      pr: '--pr 42',
      offset: '--offset -2',
      event: '--event APPROVE (one of: APPROVE, REQUEST_CHANGES, COMMENT)',
    } as Record<string, string>
  )[param]!;
}

for (const [recogniser, table] of Object.entries(cases)) {
  t.test(recogniser, async (t) => {
    t.plan(Object.keys(table).length);
    for (const [name, [answer, want]] of Object.entries(table)) t.same(answer(), want, name);
  });
}

t.test('refuse throws the problem as the envelope fields, and nothing for none', async (t) => {
  t.plan(4);
  t.doesNotThrow(() => refuse(undefined));
  let thrown: unknown;
  try {
    refuse(typographicDash(scan(review, ['—pr', '1']), 0));
  } catch (e) {
    thrown = e;
  }
  t.ok(thrown instanceof CliFailure, 'a CliFailure');
  t.same((thrown as CliFailure | undefined)?.error, {
    code: 'COMMAND_INPUT_INVALID',
    type: 'unknown-flag',
    message: "'—pr' starts with a typographic dash, not two ASCII hyphens",
    flag: 'pr',
    got: '—pr',
    hint: 'flags start with -- (ASCII hyphens); retry writes --pr',
  });
  t.same((thrown as CliFailure | undefined)?.fix, ['--pr', '1']);
});

t.test('flagWord cuts a word into the name typed, its inline value and the flag it names', async (t) => {
  t.plan(4);
  const w = flagWord(review, ['--label=x=y'], 0);
  t.same([w.dash, w.name, w.eq, w.inline, w.entry?.param], ['--', 'label', 7, 'x=y', 'labels']);
  const single = flagWord(review, ['-pr=1'], 0);
  t.same([single.dash, single.name, single.inline, single.entry], ['-', 'pr', '1', undefined]);
  const file = flagWord(review, ['--body-file'], 0);
  t.same([file.entry?.kind, flagUse({ ...file, entry: file.entry! }).key], ['file', 'body-file']);
  const negated = flagWord(review, ['--no-draft'], 0);
  t.same(
    [negated.entry?.param, negated.entry && 'negated' in negated.entry && negated.entry.negated],
    ['draft', true],
  );
});

t.test('readWord reads one word and its value, and says where to go on', async (t) => {
  t.plan(7);
  const s = scan(review, ['--pr', '7', '--draft', 'no', '--label', 'a', 'help']);
  t.equal(readWord(s, 0), 2, 'a flag and its value');
  t.equal(readWord(s, 2), 4, 'a boolean and its word');
  t.equal(readWord(s, 4), 6, 'a repeated flag');
  t.same(s.out.values, { pr: 7, draft: false, labels: ['a'] });
  t.equal(readWord(s, 6), 'help', 'a bare help');
  const v = scan(launch, ['gh', '--', 'api', 'help']);
  t.equal(readWord(v, 0), 1, 'the bare word the command takes');
  t.same(
    [readWord(v, 1), v.out.values],
    ['end', { program: 'gh', args: ['api', 'help'] }],
    'the vendor words',
  );
});
