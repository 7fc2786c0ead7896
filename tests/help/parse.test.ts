import { readFileSync } from 'node:fs';
import t from 'tap';
import { parseHelp, parseOptions } from '../../src/help/parse.js';

const page = (f: string) => readFileSync(new URL(`./fixtures/${f}`, import.meta.url), 'utf8');

// Real pages of the installed gh 2.23, az 2.45, curl 7.88, kubectl and docker (cobra), a real
// argparse and click page from Python, and clap / oclif pages as their documentation shows them.
const cases: Record<
  string,
  { file: string; summary: string | undefined; count: number; first: object; last: object; has?: object[] }
> = {
  'gh root (cobra, gh template): upper-case sections, name: summary, help topics left out': {
    file: 'gh-root.txt',
    summary: 'Work seamlessly with GitHub from the command line.',
    count: 21,
    first: { name: 'auth', summary: 'Authenticate gh and git with GitHub' },
    last: {
      name: 'status',
      summary:
        'Print information about relevant issues, pull requests, and notifications across repositories',
    },
  },
  'gh pr: two command sections in page order': {
    file: 'gh-pr.txt',
    summary: 'Work with GitHub pull requests.',
    count: 16,
    first: { name: 'create', summary: 'Create a pull request' },
    last: { name: 'view', summary: 'View a pull request' },
  },
  'gh pr list: a leaf lists nothing': {
    file: 'gh-pr-list.txt',
    summary: 'List pull requests in a GitHub repository.',
    count: 0,
    first: {},
    last: {},
  },
  'az root (knack): Subgroups are groups, Commands known leaves, [Preview] tags dropped, wrapped rows joined':
    {
      file: 'az-root.txt',
      summary: undefined,
      count: 104,
      first: { name: 'account', summary: 'Manage Azure subscription information.', kind: 'group' },
      last: {
        name: 'version',
        summary:
          'Show the versions of Azure CLI modules and extensions in JSON format by default or format configured by --output.',
        kind: 'command',
      },
      has: [
        {
          name: 'afd',
          summary:
            'Manage Azure Front Door Standard/Premium. For classical Azure Front Door, please refer https://docs.microsoft.com/en- us/cli/azure/network/front-door?view=azure-cli-latest.',
          kind: 'group',
        },
        { name: 'interactive', kind: 'command' },
      ],
    },
  'az account: the Group line holds the summary': {
    file: 'az-account.txt',
    summary: 'Manage Azure subscription information.',
    count: 8,
    first: { name: 'lock', kind: 'group' },
    last: { name: 'show', summary: 'Get the details of a subscription.', kind: 'command' },
    has: [
      {
        name: 'list',
        summary:
          "Get a list of subscriptions for the logged in account. By default, only 'Enabled' subscriptions from the current cloud is shown.",
      },
    ],
  },
  'az account list: a Command page lists nothing': {
    file: 'az-account-list.txt',
    summary:
      "Get a list of subscriptions for the logged in account. By default, only 'Enabled' subscriptions from the current cloud is shown.",
    count: 0,
    first: {},
    last: {},
  },
  'kubectl (cobra): headings with parentheses': {
    file: 'kubectl-root.txt',
    summary: 'kubectl controls the Kubernetes cluster manager.',
    count: 42,
    first: { name: 'create', summary: 'Create a resource from a file or from stdin' },
    last: { name: 'version' },
  },
  'docker (cobra): Usage first, then the prose': {
    file: 'docker-root.txt',
    summary: 'A self-sufficient runtime for containers',
    count: 57,
    first: { name: 'run' },
    last: { name: 'wait' },
  },
  'clap 4: Commands:, help left out, a row without summary': {
    file: 'clap4-root.txt',
    summary: 'A fictional versioning CLI',
    count: 5,
    first: { name: 'clone', summary: 'Clones repos' },
    last: { name: 'stash' },
  },
  'clap 3: name line dropped from the summary, SUBCOMMANDS:': {
    file: 'clap3-root.txt',
    summary: 'A fictional versioning CLI',
    count: 3,
    first: { name: 'add' },
    last: { name: 'push' },
  },
  'oclif: TOPICS are groups and win over the same name under COMMANDS': {
    file: 'oclif-root.txt',
    summary: undefined,
    count: 2,
    first: { name: 'plugins', kind: 'group' },
    last: { name: 'hello', summary: 'Say hello' },
  },
  'oclif topic page: full ids': {
    file: 'oclif-plugins.txt',
    summary: 'List installed plugins.',
    count: 2,
    first: { name: 'plugins:install' },
    last: { name: 'plugins:uninstall' },
  },
  'click: the prose is indented under Usage': {
    file: 'click-root.txt',
    summary: 'Manage the toy service from the command line.',
    count: 2,
    first: { name: 'db', summary: 'Work with databases and their schema migrations, which can be...' },
    last: { name: 'version', summary: 'Print the version.' },
  },
  'argparse: the {a,b} row and the choices under it, wrapped summaries joined': {
    file: 'argparse-root.txt',
    summary: 'Manage the toy service from the command line.',
    count: 4,
    first: { name: 'db', summary: 'Work with databases.' },
    last: { name: 'version' },
    has: [{ name: 'net', summary: 'Check for updates (tries the network while printing help).' }],
  },
};

t.test('parseHelp over real and documented pages', async (t) => {
  const names = Object.keys(cases);
  t.plan(names.length);
  for (const name of names) {
    const c = cases[name]!;
    t.test(name, async (t) => {
      const r = parseHelp(page(c.file));
      t.equal(r.summary, c.summary, 'summary');
      t.equal(r.entries.length, c.count, 'count');
      if (c.count > 0) {
        t.match(r.entries[0], c.first, 'first');
        t.match(r.entries.at(-1), c.last, 'last');
      }
      for (const h of c.has ?? [])
        t.match(
          r.entries.find((e) => e.name === (h as { name: string }).name),
          h,
          `has ${(h as { name: string }).name}`,
        );
      t.notOk(
        r.entries.some((e) => e.name === 'help'),
        'no help entry',
      );
      t.equal(new Set(r.entries.map((e) => e.name)).size, r.entries.length, 'each name once');
    });
  }
});

t.test('parseOptions: curl --help all, one row per option, dotted names included', async (t) => {
  const r = parseOptions(page('curl-all.txt'));
  t.equal(r.summary, 'Usage: curl [options...] <url>');
  t.equal(r.entries.length, 250, 'every option line of the page');
  t.same(r.entries[0], {
    name: '--abstract-unix-socket',
    summary: 'Connect via abstract Unix domain socket',
    kind: 'option',
  });
  t.match(
    r.entries.find((e) => e.name === '--http1.1'),
    { summary: 'Use HTTP 1.1' },
  );
  t.match(
    r.entries.find((e) => e.name === '--aws-sigv4'),
    { summary: 'Use AWS V4 signature authentication' },
    'a long <placeholder> is not the summary',
  );
  t.match(
    r.entries.find((e) => e.name === '--append'),
    { summary: 'Append to target file when uploading' },
    'the short form is not the name',
  );
});

t.test('terminal escapes and CRLF do not change the reading', async (t) => {
  const plain = page('gh-pr.txt');
  const coloured = plain.replace(/^([A-Z ]+COMMANDS)$/gm, '\x1b[1m$1\x1b[0m').replace(/\n/g, '\r\n');
  t.same(parseHelp(coloured), parseHelp(plain));
});
