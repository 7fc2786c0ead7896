import t from 'tap';
import { parseArgv } from '../../src/cli/argv.js';
import { CliFailure } from '../../src/cli/envelope.js';
import { reviewSubmit } from './fixtures/helpers.js';

const def = reviewSubmit as never;

// name → [argv, expected values (or failure fields)]
const parses: Record<string, [string[], Record<string, unknown>]> = {
  'bare boolean is true': [['--draft'], { draft: true }],
  '--no- form is false': [['--no-draft'], { draft: false }],
  'boolean word after the flag is consumed': [['--draft', 'no'], { draft: false }],
  'boolean words are case-insensitive': [['--draft', 'TRUE'], { draft: true }],
  'boolean 0 and 1': [['--draft', '0', '--dry-run', '1'], { draft: false, dryRun: true }],
  'boolean with =': [['--draft=yes'], { draft: true }],
  'a non-boolean word after a boolean is not consumed': [['--draft', '--pr', '3'], { draft: true, pr: 3 }],
  'negative number as a value': [['--offset', '-5'], { offset: -5 }],
  'negative fraction with =': [['--offset=-0.5'], { offset: -0.5 }],
  'enum raw': [['--event', 'APPROVE'], { event: 'APPROVE' }],
  'repeated flag builds an array, aliases mix': [
    ['--label', 'a', '--labels', 'b c'],
    { labels: ['a', 'b c'] },
  ],
  'JSON array of objects': [
    ['--comments', '[{"path":"a","line":1,"body":"x"}]'],
    { comments: [{ path: 'a', line: 1, body: 'x' }] },
  ],
  'one object becomes a one-element array (alias)': [
    ['--comment', '{"path":"a"}'],
    { comments: [{ path: 'a' }] },
  ],
  'entries are not checked by the tokenizer': [['--comments', '[1,2]'], { comments: [1, 2] }],
  'object param': [['--meta', '{"a":1}'], { meta: { a: 1 } }],
  'string value may start with a single dash': [['--body', '-x'], { body: '-x' }],
  'string value with = inside': [['--body=a=b'], { body: 'a=b' }],
  'a literal --value through =': [['--body=--not-a-flag'], { body: '--not-a-flag' }],
};

t.test('values the tokenizer accepts', async (t) => {
  t.plan(Object.keys(parses).length);
  for (const [name, [argv, want]] of Object.entries(parses)) {
    t.same(parseArgv(def, argv).values, want, name);
  }
});

t.test('file flags are recorded, not read', async (t) => {
  const r = parseArgv(def, ['--body-file', '-', '--comments-file', 'c.json']);
  t.same(r.files, [
    { param: 'body', flag: 'body-file', path: '-', parseAs: 'text', at: 0, words: 2 },
    { param: 'comments', flag: 'comments-file', path: 'c.json', parseAs: 'json', at: 2, words: 2 },
  ]);
  t.same(r.values, {});
});

t.test('--help anywhere asks for help', async (t) => {
  t.equal(parseArgv(def, ['--pr', '1', '-h']).help, true);
});

// name → [argv, expected error fields]
const failures: Record<string, [string[], Record<string, unknown>]> = {
  'unknown flag with suggestion (transposition)': [
    ['--evnet', 'APPROVE'],
    { type: 'unknown-flag', flag: 'evnet', hint: 'did you mean --event?' },
  ],
  'typo of an alias suggests the canonical flag': [
    ['--comennt', '{}'],
    { type: 'unknown-flag', hint: 'did you mean --comments?' },
  ],
  'far typo: no hint': [['--zzzzzz'], { type: 'unknown-flag', hint: undefined }],
  "an unknown flag's inline value is not echoed (it may be a secret)": [
    ['--connection={"accessToken":"gho_abcdefghijklmnopqrstu12345"}'],
    { type: 'unknown-flag', flag: 'connection', got: '--connection=…' },
  ],
  'a secret-shaped stray argument is redacted in got': [
    ['gho_abcdefghijklmnopqrstu12345'],
    { type: 'flag-parse', got: '[REDACTED]' },
  ],
  'short flags do not exist': [['-p', '1'], { type: 'unknown-flag', flag: '-p' }],
  'gadgetOnly params are not flags': [['--request-id', 'x'], { type: 'unknown-flag', flag: 'request-id' }],
  'number that is not a number': [['--pr', 'twelve'], { type: 'flag-parse', flag: 'pr', got: 'twelve' }],
  'integer flag rejects fractions': [['--pr', '1.5'], { type: 'flag-parse', flag: 'pr' }],
  'enum mismatch with case hint': [
    ['--event', 'approve'],
    { type: 'enum-mismatch', flag: 'event', hint: "did you mean '--event APPROVE'?" },
  ],
  'missing value at the end': [['--body'], { type: 'flag-parse', flag: 'body' }],
  'a flag where a value should be': [
    ['--body', '--draft'],
    { type: 'flag-parse', flag: 'body', got: '--draft' },
  ],
  'bad boolean with =': [['--draft=maybe'], { type: 'flag-parse', flag: 'draft', got: 'maybe' }],
  '--no-x takes no value': [['--no-draft=true'], { type: 'flag-parse', flag: 'draft' }],
  'flag given twice': [['--pr', '1', '--pr', '2'], { type: 'flag-parse', flag: 'pr' }],
  'direct flag and file flag together': [
    ['--body', 'x', '--body-file', 'f'],
    { type: 'flag-parse', flag: 'body,body-file' },
  ],
  'bad JSON': [['--comments', '[{'], { type: 'json-parse', flag: 'comments', got: '[{' }],
  'JSON of the wrong top-level shape': [['--comments', '"x"'], { type: 'json-parse', flag: 'comments' }],
  'object param given an array': [['--meta', '[]'], { type: 'json-parse', flag: 'meta' }],
  'positional argument': [['42'], { type: 'flag-parse', got: '42' }],
  'arguments after -- without a rest param': [['--', 'x'], { type: 'flag-parse' }],
};

t.test('what the tokenizer refuses, with the envelope fields', async (t) => {
  t.plan(Object.keys(failures).length);
  for (const [name, [argv, want]] of Object.entries(failures)) {
    try {
      parseArgv(def, argv);
      t.fail(`${name}: parsed`);
    } catch (e) {
      if (!(e instanceof CliFailure)) throw e;
      const got: Record<string, unknown> = {};
      for (const k of Object.keys(want)) got[k] = (e.error as unknown as Record<string, unknown>)[k];
      t.same(got, want, name);
    }
  }
});

t.test('got is cut at 200 characters, with the original length', async (t) => {
  try {
    parseArgv(def, ['--comments', `[${'x'.repeat(500)}`]);
    t.fail('parsed');
  } catch (e) {
    const got = (e as CliFailure).error.got!;
    t.ok(got.length <= 220, `${got.length} characters`);
    t.match(got, /… \(501 chars\)$/);
  }
});
