/**
 * Echo hygiene: nothing secret-shaped comes back in an envelope (any field) or on stderr,
 * whichever input position it was typed into, and no input comes back longer than the cap.
 * The class, not one example: every secret shape the detector knows, in every place argv
 * or gadget input reaches a message.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { BUNDLED_TOOLS } from '../../src/commands/index.js';
import { ECHO_MAX, echo, failure, proseLine } from '../../src/cli/envelope.js';
import { createGadget } from '../../src/cli/gadget.js';
import { curlCli, githubExtension } from '../../src/manifest/examples.js';
import { TEST_TOOLS, buildBinary, reviewSubmit, runCli, spawnWith, testCli } from './fixtures/helpers.js';

const cli = testCli([...TEST_TOOLS, ...BUNDLED_TOOLS]);

// One of each shape the detector knows (built at run time so no scanner flags this file).
const SECRETS: Record<string, string> = {
  'github token': `ghp_${'A1b2C3d4E5f6G7h8I9j0'.repeat(2)}`,
  'fine-grained github token': `github_pat_${'11ABCDEFG0abcdefghij'.repeat(2)}`,
  'slack token': `xoxb-${'1234567890-abcdefABCDEF'}`,
  'aws key': `AKIA${'IOSFODNN7EXAMPLE'}`,
  'sk key': `sk-${'proj-'}${'aB3dE6gH9jK2mN5pQ8sT1v'.repeat(2)}`,
  jwt: `eyJ${'hbGciOiJIUzI1NiJ9'}.eyJ${'zdWIiOiIxMjM0In0'}.${'dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk'}`,
  'url credentials': `https://alice:${'s3cr3t-pass'}@example.com/x`,
  'high-entropy run': 'q8ZrT4pLx2Vb9NcW7eKs3MhJ6aYd1FgU5',
};

/** Every input position of the CLI, given one value. */
function positions(v: string): Record<string, string[]> {
  const review = ['review', 'submit', '--pr', '1', '--event', 'APPROVE'];
  return {
    'a positional argument': [...review, v],
    'an unknown flag name': [...review, `--${v}`],
    'an unknown flag with an inline value': [...review, `--x=${v}`],
    'an enum value': ['review', 'submit', '--pr', '1', '--event', v],
    'a number value': ['review', 'submit', '--pr', v, '--event', 'APPROVE'],
    'a value starting with --': [...review, '--body', `--${v}`],
    'broken JSON around it': [...review, '--comments', `[{'body':'${v}',}]`],
    'JSON cut off inside it': [...review, '--comments', `[{"body":"${v}`],
    'JSON cut off right before it': [...review, '--meta', `{"a":1 ${v}`],
    'a bare word in JSON': [...review, '--meta', `{"token": ${v}}`],
    'a file path': [...review, '--body-file', `/nonexistent/${v}`],
    'a topic': [v, 'submit'],
    'a command': ['review', v],
    'a vendor argument without --': ['vendor', 'run', '--cli', 'gh', v],
    'a header line': [
      'policy',
      'classify',
      '--method',
      'GET',
      '--url',
      'not a url',
      '--header',
      `authorization ${v}`,
    ],
    'a header line without a colon': [
      'policy',
      'classify',
      '--method',
      'GET',
      '--url',
      '/x',
      '--header',
      `authorization ${v.replaceAll(':', ' ')}`,
    ],
    'a url': ['policy', 'classify', '--method', 'GET', '--url', `nope ${v}`],
    'the store path': ['approvals', 'list', '--store', `/nonexistent/${v}`],
    'an approval id': ['approvals', 'show', '--id', v, '--store', '/nonexistent/store.db'],
  };
}

/** The distinctive fragments of a secret: every slice of up to 12 characters of its random part. */
function fragments(secret: string): string[] {
  const core = secret
    .replace(/^(ghp_|github_pat_|xoxb-|AKIA|sk-proj-)/, '')
    .replace(/^https:\/\/alice:(.*)@.*$/, '$1');
  const n = Math.min(12, core.length);
  const out: string[] = [];
  for (let i = 0; i + n <= core.length; i += 4) out.push(core.slice(i, i + n));
  return out;
}

t.test('no secret shape comes back from any input position, in any field or on stderr', async (t) => {
  for (const [kind, secret] of Object.entries(SECRETS)) {
    for (const [where, argv] of Object.entries(positions(secret))) {
      const r = await runCli(cli, argv);
      t.equal(r.env?.success, false, `${kind} in ${where}: a failure`);
      const leaked = fragments(secret).filter((f) => r.stdout.includes(f) || r.stderr.includes(f));
      t.same(leaked, [], `${kind} in ${where}: not echoed (${r.stdout.slice(0, 160)})`);
    }
  }
});

t.test('a 10 KB argument never produces 10 KB: every field and the stderr line are capped', async (t) => {
  const big = `${'word '.repeat(2000)}end`;
  for (const [where, argv] of Object.entries(positions(big))) {
    const r = await runCli(cli, argv);
    t.ok(r.stdout.length < 3000, `${where}: stdout ${r.stdout.length} characters`);
    t.ok(r.stderr.length < 1500, `${where}: stderr ${r.stderr.length} characters`);
    const err = r.env && !r.env.success ? r.env.error : undefined;
    if (err?.got !== undefined)
      t.ok(err.got.length <= ECHO_MAX + 24, `${where}: got ${err.got.length} characters`);
  }
});

t.test('a 1 MiB argument is answered at once, capped (the redactor only scans a window)', async (t) => {
  const r = await runCli(cli, [
    'review',
    'submit',
    '--pr',
    '1',
    '--event',
    'APPROVE',
    `x${'Ab1'.repeat(350_000)}`,
  ]);
  t.equal(r.env?.success, false);
  t.ok(r.stdout.length < 3000 && r.stderr.length < 1500);
});

t.test('the cap says where it cut and how long the input was; redaction comes before the cut', async (t) => {
  t.equal(ECHO_MAX, 80);
  t.equal(echo('x'.repeat(300)), `${'x'.repeat(80)}… (300 chars)`);
  t.equal(echo(echo('x'.repeat(300))), echo('x'.repeat(300)), 'idempotent');
  const secret = SECRETS['github token']!;
  // a cut through the secret would leave a fragment too short to recognise: redacted first
  const cut = echo(`${'a'.repeat(ECHO_MAX - 10)} ${secret}`);
  t.notMatch(cut, /A1b2C3d4/);
  t.match(cut, /\[REDACTED/);
});

t.test('the one sanitising step covers every field, whoever built the error', async (t) => {
  const secret = SECRETS['github token']!;
  const raw = {
    type: 'runtime' as const,
    message: `m ${secret}`,
    got: secret,
    expected: `e ${secret}`,
    hint: `h ${secret}`,
    flag: secret,
    example: `clibroker x ${secret}`,
    retry: `clibroker y ${secret}`,
  };
  const env = failure(raw);
  const line = proseLine('clibroker', raw);
  t.notMatch(JSON.stringify(env), /A1b2C3d4/);
  t.notMatch(line, /A1b2C3d4/);
  t.notOk(
    env.success === false && (env.error.example || env.error.retry),
    'a command line that needed redacting is dropped, not echoed half',
  );
});

t.test('stderr shows control characters escaped, on one line', async (t) => {
  const r = await runCli(cli, [
    'review',
    'submit',
    '--pr',
    '1',
    '--event',
    'APPROVE',
    '\u001b[31mred\r\nline2',
  ]);
  t.notMatch(r.stderr, /\u001b/);
  t.equal(r.stderr.split('\n').filter(Boolean).length, 1);
  t.match(r.stderr, /\\u001b/);
});

t.test('the gadget envelope is redacted the same way (unknown keys, values)', async (t) => {
  const g = createGadget(reviewSubmit);
  const secret = SECRETS['high-entropy run']!;
  for (const input of [
    { pr: 1, event: 'APPROVE', [secret]: 1 },
    { pr: secret, event: 'APPROVE' },
    { pr: 1, event: secret },
  ]) {
    const env = await g.invoke(input);
    t.equal(env.success, false);
    t.notMatch(JSON.stringify(env), /q8ZrT4pLx2Vb/, JSON.stringify(env).slice(0, 200));
  }
});

t.test(
  'vendor run --connection-file given the connection JSON itself: the token never comes back (spawned binary)',
  async (t) => {
    const { bin } = await buildBinary();
    const dir = dirname(dirname(bin));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const manifest = join(dir, 'manifest.json');
    writeFileSync(manifest, JSON.stringify(githubExtension([curlCli()])));
    // a token the detector recognises, and one it cannot (a plain password): neither may come back
    for (const token of [SECRETS['github token']!, 'hunter2-plain-password']) {
      const conn = JSON.stringify({ kind: 'oauth_access_token', accessToken: token });
      for (const flagWords of [['--connection-file', conn], [`--connection-file=${conn}`]]) {
        const r = spawnWith(bin, [
          'vendor',
          'run',
          '--manifest-file',
          manifest,
          '--cli',
          'curl',
          ...flagWords,
          '--store',
          ':memory:',
          '--',
          '-sS',
          'https://api.github.com/user',
        ]);
        t.equal(r.code, 1, r.stdout);
        t.match(r.env, { success: false, error: { type: 'flag-parse', flag: 'connection-file' } });
        t.notOk(
          r.stdout.includes(token.slice(4, 16)) || r.stderr.includes(token.slice(4, 16)),
          `the token is in neither stdout nor stderr (${token.slice(0, 6)}…)`,
        );
      }
      // and a typo elsewhere (a flag, or the command itself) must not offer a retry that repeats it
      for (const [argv, type] of [
        [
          [
            'vendor',
            'run',
            '--manifest-file',
            manifest,
            '--cli',
            'curl',
            '--connection-file',
            conn,
            '--tire',
            'read',
            '--',
            '-sS',
            'https://x',
          ],
          'unknown-flag',
        ],
        [
          [
            'vendr',
            'run',
            '--manifest-file',
            manifest,
            '--cli',
            'curl',
            `--connection-file=${conn}`,
            '--',
            '-sS',
            'https://x',
          ],
          'unknown-command',
        ],
      ] as const) {
        const typo = spawnWith(bin, [...argv]);
        t.match(typo.env, { success: false, error: { type } });
        t.notOk(
          typo.stdout.includes(token.slice(4, 16)) || typo.stderr.includes(token.slice(4, 16)),
          `no retry echoes the connection (${type})`,
        );
      }
    }
  },
);

t.test(
  'no retry repeats an inline connection, whether the correction is to a flag or to the command',
  async (t) => {
    const conn = JSON.stringify({ kind: 'oauth_access_token', accessToken: 'hunter2-plain-password' });
    const tail = ['--manifest-file', 'm.json', '--cli', 'curl'];
    for (const argv of [
      ['vendr', 'run', ...tail, `--connection-file=${conn}`, '--', '-sS', 'https://x'],
      ['vendor', 'rnu', ...tail, '--connection-file', conn],
      ['vendor', 'run', ...tail, '--connection-file', conn, '--tire', 'read'],
      ['vendor', 'run', ...tail, '--connection-file', conn, 'pr', 'list'],
    ]) {
      const r = await runCli(cli, argv);
      t.equal(r.env?.success, false);
      t.notMatch(r.stdout + r.stderr, /hunter2/, argv.slice(0, 2).join(' '));
    }
    // the control: the same mistakes without the connection do get a retry
    const control = await runCli(cli, ['vendr', 'run', ...tail, '--connection-file=conn.json']);
    t.match(control.env, {
      success: false,
      error: { retry: 'clibroker vendor run --manifest-file m.json --cli curl --connection-file=conn.json' },
    });
  },
);
