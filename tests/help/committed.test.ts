import { existsSync, readFileSync } from 'node:fs';
import t from 'tap';
import { COMMITTED_TREES, committedHelpTree } from '../../src/help/committed.js';
import { countCommands, serializeHelpTreeDocument } from '../../src/help/document.js';
import { generateHelpTreeDocument } from '../../src/help/generate.js';
import { KNOWN_CLIS } from '../../src/help/known.js';
import { cliManifestProblems } from '../../src/manifest/index.js';

const file = (cli: string) => new URL(`../../help-trees/${cli}.json`, import.meta.url);

t.test('every committed tree is canonical, loads, and records how it was made', async (t) => {
  t.plan(COMMITTED_TREES.length * 5 + 1);
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    files: string[];
  };
  t.ok(pkg.files.includes('help-trees'), 'shipped in the package');
  for (const cli of COMMITTED_TREES) {
    const doc = committedHelpTree(cli)!;
    t.equal(serializeHelpTreeDocument(doc), readFileSync(file(cli), 'utf8'), `${cli}: canonical bytes`);
    const known = KNOWN_CLIS[cli]!;
    t.same(
      { maxDepth: doc.maxDepth, ...doc.crawl },
      { maxDepth: known.maxDepth, entrypoint: known.entrypoint, helpArgs: known.helpArgs, list: known.list },
      `${cli}: made with the known settings`,
    );
    const problems = cliManifestProblems({
      id: cli,
      binary: { image: 'isolated', entrypoint: cli },
      helpTree: doc.tree,
      helpCrawl: { maxDepth: doc.maxDepth },
    }).items;
    t.same(problems, [], `${cli}: accepted by the manifest rules`);
    t.ok(
      doc.tree.partial === undefined || doc.tree.partial.reason === 'max_depth',
      `${cli}: complete or cut at its depth only`,
    );
    t.ok(countCommands(doc.tree.commands) > 20, `${cli}: ${countCommands(doc.tree.commands)} commands`);
  }
});

t.test('the installed binaries crawl to exactly the committed trees', async (t) => {
  for (const cli of COMMITTED_TREES) {
    const missing = !existsSync(`/usr/bin/${cli}`);
    t.test(cli, { skip: missing ? `/usr/bin/${cli} is not installed here` : false }, async (t) => {
      const committed = readFileSync(file(cli), 'utf8');
      const { document, result } = await generateHelpTreeDocument({ cli, ...KNOWN_CLIS[cli]! });
      const before = committedHelpTree(cli)!;
      // A version change means regenerating (npm run help-trees), never a silent difference.
      t.equal(
        document.version,
        before.version,
        `${cli}: installed ${document.version}, committed for ${before.version}; run 'npm run help-trees' and review the diff`,
      );
      t.equal(
        serializeHelpTreeDocument(document),
        committed,
        `${cli}: same bytes (${result.stats.pages} pages in ${result.stats.durationMs} ms)`,
      );
    });
  }
});
