import { fileURLToPath } from 'node:url';
import t from 'tap';
import { crawlHelpTree, versionLine } from '../../src/help/crawl.js';
import { countCommands, serializeHelpTreeDocument } from '../../src/help/document.js';
import { cliManifestProblems } from '../../src/manifest/index.js';

// A real argparse CLI four levels deep (db migrate up now), run by /usr/bin/python3 in the
// isolated sandbox like any vendor CLI.
const toolctl = fileURLToPath(new URL('./fixtures/toolctl.py', import.meta.url));
const fast = { TOOLCTL_SLOW: '0' };

const loads = (tree: unknown, maxDepth: number) =>
  cliManifestProblems({
    id: 'toolctl',
    binary: { image: 'isolated', entrypoint: toolctl },
    helpTree: tree,
    helpCrawl: { maxDepth },
  }).items.map((p) => p.code);

t.test('three levels: the tree stops at maxDepth, says max_depth and loads', async (t) => {
  const r = await crawlHelpTree({ entrypoint: toolctl, maxDepth: 3, env: fast });
  t.equal(r.stats.profile, 'isolated');
  t.equal(r.version, 'toolctl 1.2.3 (test fixture)');
  t.equal(r.tree.summary, 'Manage the toy service from the command line.');
  t.same(
    r.tree.commands.map((c) => c.name),
    ['db', 'net', 'slow', 'version'],
    'page order',
  );
  const db = r.tree.commands[0]!;
  t.same(db, {
    name: 'db',
    summary: 'Work with databases.',
    commands: [
      {
        name: 'migrate',
        summary: 'Run schema migrations.',
        commands: [
          { name: 'up', summary: 'Apply pending migrations.' },
          { name: 'down', summary: 'Undo the last migration.' },
        ],
      },
      { name: 'shell', summary: 'Open a database shell.' },
    ],
  });
  t.same(r.tree.partial, { reason: 'max_depth' }, 'db migrate up has a fourth level');
  t.equal(countCommands(r.tree.commands), 8);
  t.same(loads(r.tree, 3), [], 'a tree cut at maxDepth is accepted');
  t.same(r.stats.failed, []);
});

t.test('one level: children are probed, not kept', async (t) => {
  const r = await crawlHelpTree({ entrypoint: toolctl, maxDepth: 1, env: fast, versionArgs: false });
  t.same(
    r.tree.commands.map((c) => c.commands),
    [undefined, undefined, undefined, undefined],
  );
  t.same(r.tree.partial, { reason: 'max_depth' });
  t.equal(r.version, undefined, 'versionArgs false: no version asked');
  t.equal(r.stats.pages, 5, 'the root and each of the four commands');
});

t.test('a request while printing help is refused and recorded against that page', async (t) => {
  const r = await crawlHelpTree({ entrypoint: toolctl, maxDepth: 1, env: fast });
  t.same(r.networkAttempts, [
    { command: 'net --help', method: 'CONNECT', target: 'updates.example.com:443' },
  ]);
  t.match(
    r.tree.commands.find((c) => c.name === 'net'),
    { summary: 'Check for updates (tries the network while printing help).' },
    'the help still read',
  );
});

t.test('two crawls give the same bytes', async (t) => {
  const doc = async () => {
    const r = await crawlHelpTree({ entrypoint: toolctl, maxDepth: 2, env: fast, concurrency: 3 });
    return serializeHelpTreeDocument({
      cli: 'toolctl',
      version: r.version!,
      maxDepth: 2,
      crawl: { entrypoint: 'toolctl.py', helpArgs: ['--help'], list: 'commands' },
      tree: r.tree,
      networkAttempts: r.networkAttempts,
    });
  };
  const [a, b] = [await doc(), await doc()];
  t.equal(a, b);
  t.notMatch(
    a,
    /clibroker-sbx-|\/tmp\/|"durationMs"|20\d\d-\d\d-\d\dT/,
    'no call directory, duration or timestamp',
  );
});

// The slow page sleeps an hour: the crawl returning at all (within the test's limit) is its kill at the per-call deadline.
t.test(
  'a budget that cuts the crawl is recorded, and such a tree is refused at load',
  { timeout: 90_000 },
  async (t) => {
    const byCount = await crawlHelpTree({
      entrypoint: toolctl,
      maxDepth: 3,
      env: fast,
      budgets: { maxCommands: 5 },
    });
    t.equal(countCommands(byCount.tree.commands), 5);
    t.same(byCount.tree.partial, { reason: 'command_budget' });
    t.same(
      byCount.tree.commands[0]!.commands!.map((c) => c.name),
      ['migrate'],
      'the first five in breadth-first page order: four top-level commands, then db migrate',
    );
    t.same(loads(byCount.tree, 3), ['MANIFEST_HELP_TREE_PARTIAL']);

    const byTime = await crawlHelpTree({
      entrypoint: toolctl,
      maxDepth: 2,
      env: { TOOLCTL_SLOW: '3600' },
      budgets: { perCallMs: 2000 },
    });
    t.same(byTime.tree.partial, { reason: 'time_budget' }, 'the slow page was killed at its deadline');
    t.same(byTime.stats.failed, ['slow']);
    t.same(loads(byTime.tree, 2), ['MANIFEST_HELP_TREE_PARTIAL']);

    const byOutput = await crawlHelpTree({
      entrypoint: toolctl,
      maxDepth: 3,
      env: fast,
      budgets: { maxOutputBytes: 600 },
    });
    t.same(byOutput.tree.partial, { reason: 'output_budget' });
    t.same(loads(byOutput.tree, 3), ['MANIFEST_HELP_TREE_PARTIAL']);
  },
);

t.test('the root page must be readable, and the depth within 1..3', async (t) => {
  // a program that exits non-zero and prints nothing (/bin/false itself prints help for --help)
  await t.rejects(
    crawlHelpTree({ entrypoint: '/bin/sh', helpArgs: ['-c', 'exit 3'], maxDepth: 1, versionArgs: false }),
    { code: 'HELP_CRAWL_FAILED', details: { phase: 'root' } },
  );
  await t.rejects(crawlHelpTree({ entrypoint: '/nonexistent/cli', maxDepth: 1 }), {
    code: 'HELP_CRAWL_FAILED',
  });
  await t.rejects(crawlHelpTree({ entrypoint: toolctl, maxDepth: 4 }), { code: 'INVALID_TOOL_INPUT' });
  await t.rejects(crawlHelpTree({ entrypoint: toolctl, maxDepth: 0 }), { code: 'INVALID_TOOL_INPUT' });
});

t.test('versionLine keeps the version, not the libraries after it', async (t) => {
  t.equal(
    versionLine(
      'gh version 2.23.0 (2023-02-27 Debian 2.23.0+dfsg1-1)\nhttps://github.com/cli/cli/releases/tag/v2.23.0\n',
    ),
    'gh version 2.23.0 (2023-02-27 Debian 2.23.0+dfsg1-1)',
  );
  t.equal(versionLine('azure-cli                         2.45.0\n\ncore  2.45.0\n'), 'azure-cli 2.45.0');
  t.equal(
    versionLine(
      'curl 7.88.1 (x86_64-pc-linux-gnu) libcurl/7.88.1 OpenSSL/3.0.19 zlib/1.2.13\nRelease-Date: 2023-02-20',
    ),
    'curl 7.88.1 (x86_64-pc-linux-gnu)',
  );
  t.equal(versionLine('\n\n'), undefined);
});
