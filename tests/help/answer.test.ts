import { createHook } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { answerHelpFromTree, describeCli } from '../../src/help/index.js';
import type { HelpTreeDocument } from '../../src/help/index.js';

const doc = (cli: string) =>
  JSON.parse(
    readFileSync(new URL(`../../help-trees/${cli}.json`, import.meta.url), 'utf8'),
  ) as HelpTreeDocument;
const gh = doc('gh').tree;
const az = doc('az').tree;
const curl = doc('curl').tree;

t.test('which arguments the tree answers, and which run the real CLI', async (t) => {
  const cases: Record<string, [tree: typeof gh, args: string[], answered: RegExp | undefined]> = {
    'root --help': [
      gh,
      ['--help'],
      /^gh: Work seamlessly with GitHub from the command line\.\n\nCommands:\n {2}auth +Authenticate gh and git with GitHub\n/,
    ],
    'root -h': [gh, ['-h'], /^gh: Work seamlessly/],
    'help alone': [gh, ['help'], /^gh: Work seamlessly/],
    'a group, --help last': [
      gh,
      ['pr', '--help'],
      /^gh pr: Manage pull requests\n\nCommands:\n {2}create {4}Create a pull request\n/,
    ],
    'a group, -h': [gh, ['pr', '-h'], /^gh pr: Manage pull requests/],
    'a group, --help first': [gh, ['--help', 'pr'], /^gh pr: Manage pull requests/],
    'help <group>': [gh, ['help', 'pr'], /^gh pr: Manage pull requests/],
    'a third-level group': [
      gh,
      ['codespace', 'ports', '--help'],
      /^gh codespace ports: .*\n\nCommands:\n {2}forward/,
    ],
    'a leaf: the real CLI': [gh, ['pr', 'list', '--help'], undefined],
    'help <leaf>: the real CLI': [gh, ['help', 'pr', 'list'], undefined],
    'an unknown command: the real CLI': [gh, ['nosuch', '--help'], undefined],
    'a flag besides help: the real CLI': [gh, ['pr', '--repo', 'a/b', '--help'], undefined],
    'two help flags: the real CLI': [gh, ['pr', '--help', '-h'], undefined],
    'no help flag: not a help request': [gh, ['pr', 'list'], undefined],
    'help with a flag: the real CLI': [gh, ['help', '--json'], undefined],
    '--help=x is not ours': [gh, ['pr', '--help=x'], undefined],
    'az root, partial: says so': [
      az,
      ['--help'],
      /^az\n\nCommands:\n {2}account .*\n[\s\S]*This help tree is partial \(max_depth\)[\s\S]*'az <command> --help' still answers/,
    ],
    'az group at the cut: the real CLI': [az, ['account', '--help'], undefined],
    'curl: options are not subcommands': [curl, ['--help'], undefined],
    'curl -h': [curl, ['-h'], undefined],
  };
  t.plan(Object.keys(cases).length);
  for (const [name, [tree, args, want]] of Object.entries(cases)) {
    const program = tree === gh ? 'gh' : tree === az ? 'az' : 'curl';
    const got = answerHelpFromTree(tree, args, program);
    if (want === undefined) t.equal(got, undefined, name);
    else t.match(got, want, name);
  }
});

t.test('the page: every subcommand with its summary, how to reach the CLI, stable', async (t) => {
  const page = answerHelpFromTree(gh, ['pr', '--help'], 'gh')!;
  const pr = gh.commands.find((c) => c.name === 'pr')!;
  for (const c of pr.commands!)
    t.match(
      page,
      new RegExp(`\\n  ${c.name} +${c.summary!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`),
      c.name,
    );
  t.match(
    page,
    "Run 'gh pr <command> --help' for a command's own help (flags, arguments); that runs gh itself.\n",
  );
  t.notMatch(page, /partial/, 'a complete tree does not say partial');
  t.equal(answerHelpFromTree(gh, ['pr', '--help'], 'gh'), page, 'the same every time');
  t.ok(page.length < 2000, `compact: ${page.length} characters`);
});

t.test('answering spawns no process and opens no handle', async (t) => {
  const kinds: string[] = [];
  const hook = createHook({
    init(_id, type) {
      kinds.push(type);
    },
  }).enable();
  let answered = 0;
  for (let i = 0; i < 200; i++) {
    for (const args of [
      ['--help'],
      ['pr', '--help'],
      ['help', 'repo'],
      ['codespace', 'ports', '-h'],
      ['pr', 'list', '--help'],
    ]) {
      if (answerHelpFromTree(gh, args, 'gh') !== undefined) answered++;
    }
  }
  hook.disable();
  t.equal(answered, 800, 'four of the five are answered from the tree');
  t.notOk(kinds.includes('PROCESSWRAP'), 'no child process');
  t.same(
    kinds.filter((k) => k !== 'PROMISE'),
    [],
    'no handle or request of any kind (timers, sockets, files)',
  );
});

t.test('the help door imports nothing that starts processes', async (t) => {
  const src = ['answer', 'describe', 'index']
    .map((f) => readFileSync(new URL(`../../src/help/${f}.ts`, import.meta.url), 'utf8'))
    .join('\n');
  const imports = [...src.matchAll(/^(?:import|export)[^'"]*from '([^']+)'/gm)].map((m) => m[1]);
  t.same(
    imports.filter(
      (i) => !/^\.\/(answer|describe|committed|document|crawl)\.js$|^\.\.\/manifest\/types\.js$/.test(i!),
    ),
    [],
    'only the tree types and the pure modules',
  );
  t.match(src, /export type \{[^}]*\} from '\.\/crawl\.js'/, 'the crawler is reached as types only');
});

t.test('describeCli: summary and top-level commands within the budget', async (t) => {
  const full = describeCli('gh', gh, 4000);
  t.match(
    full,
    /^gh: Work seamlessly with GitHub from the command line\. Commands: auth \(Authenticate gh and git with GitHub\), browse \(/,
  );
  t.match(
    full,
    /, status \(Print information about relevant issues, pull requests, and notifications acros…\)\.$/,
    'every command, ending the list, long summaries clipped',
  );
  t.notMatch(full, /partial/);

  const names = describeCli('gh', gh, 400);
  t.ok(names.length <= 400, `${names.length} ≤ 400`);
  t.notMatch(names, /\(Authenticate/, 'summaries dropped before commands');
  t.match(names, /Commands: auth, browse, codespace, gist, /);

  const tight = describeCli('gh', gh, 150);
  t.ok(tight.length <= 150, `${tight.length} ≤ 150`);
  t.match(
    tight,
    /, and \d+ more \(the list is partial; 'gh --help' tells how to list them all\)\.$/,
    'cut lists say how many are missing',
  );

  const azText = describeCli('az', az, 1500);
  t.ok(azText.length <= 1500);
  t.match(
    azText,
    /^Run the az CLI through clibroker's governing proxy\. Commands: account/,
    'az has no summary of its own',
  );
  t.match(
    azText,
    /The tree was crawled to a limited depth \(max_depth\); 'az <command> --help' answers for the rest\.$/,
  );

  t.match(
    describeCli('curl', curl, 600),
    /^curl: Usage: curl \[options\.\.\.\] <url> Options: --abstract-unix-socket, /,
  );
  t.equal(describeCli('x', undefined, 100), "Run the x CLI through clibroker's governing proxy.");
  t.equal(describeCli('gh', gh, 700), describeCli('gh', gh, 700), 'deterministic');
});
