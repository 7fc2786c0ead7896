import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { type HelpTreeDocument, serializeHelpTreeDocument } from '../../src/help/document.js';
import { buildBinary, spawnWith } from '../cli/fixtures/helpers.js';

// `clibroker helptree crawl` through the real bundled program, crawling a real argparse CLI.
const { bin } = await buildBinary();
const work = mkdtempSync(join(tmpdir(), 'helptree-cmd-'));
t.teardown(() => {
  rmSync(dirname(dirname(bin)), { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});
const toolctl = fileURLToPath(new URL('./fixtures/toolctl.py', import.meta.url));

t.test('--entrypoint and --out: data is the document, the file its canonical bytes', async (t) => {
  const out = join(work, 'toolctl.json');
  const r = spawnWith(
    bin,
    ['helptree', 'crawl', '--cli', 'toolctl', '--entrypoint', toolctl, '--max-depth', '1', '--out', out],
    { env: { TOOLCTL_SLOW: '0' } },
  );
  t.equal(r.code, 0, r.stderr);
  const doc = (r.env as { data?: unknown } | undefined)?.data as HelpTreeDocument;
  t.match(doc, {
    cli: 'toolctl',
    version: 'toolctl 1.2.3 (test fixture)',
    maxDepth: 1,
    crawl: { entrypoint: 'toolctl.py', helpArgs: ['--help'], list: 'commands' },
    tree: { partial: { reason: 'max_depth' } },
  });
  t.same(
    doc.tree.commands.map((c) => c.name),
    ['db', 'net', 'slow', 'version'],
  );
  t.same(doc.networkAttempts, [
    { command: 'net --help', method: 'CONNECT', target: 'updates.example.com:443' },
  ]);
  t.equal(readFileSync(out, 'utf8'), serializeHelpTreeDocument(doc));
});

t.test('--manifest-file: the declared entrypoint, env and helpCrawl.maxDepth', async (t) => {
  const manifest = join(work, 'ext.json');
  writeFileSync(
    manifest,
    JSON.stringify({
      id: 'toy',
      egress: ['toy.example.com'],
      clis: [
        {
          id: 'toolctl',
          binary: { image: 'isolated', entrypoint: toolctl },
          env: { TOOLCTL_SLOW: '0' },
          helpCrawl: { maxDepth: 2 },
        },
      ],
    }),
  );
  const r = spawnWith(bin, ['helptree', 'crawl', '--cli', 'toolctl', '--manifest-file', manifest]);
  t.equal(r.code, 0, r.stderr);
  const doc = (r.env as { data?: unknown } | undefined)?.data as HelpTreeDocument;
  t.equal(doc.maxDepth, 2);
  t.same(
    doc.tree.commands[0]!.commands!.map((c) => c.name),
    ['migrate', 'shell'],
    'the second level is there',
  );
  const missing = spawnWith(bin, ['helptree', 'crawl', '--cli', 'nope', '--manifest-file', manifest]);
  t.equal(missing.code, 1);
  t.match(missing.env, { success: false, error: { type: 'runtime', message: /declares no CLI 'nope'/ } });
});

t.test('a program that prints no help: a coded failure', async (t) => {
  const r = spawnWith(bin, ['helptree', 'crawl', '--cli', 'x', '--entrypoint', '/nonexistent/x']);
  t.equal(r.code, 1);
  t.match(r.env, { success: false, error: { message: /^HELP_CRAWL_FAILED/ } });
});
