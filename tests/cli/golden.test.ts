import { readFileSync, writeFileSync } from 'node:fs';
import t from 'tap';
import { manifestText, mcpTools } from '../../src/cli/manifest.js';
import { TEST_TOOLS, runCli, testCli } from './fixtures/helpers.js';

// Golden files live in tests/cli/golden; GOLDEN_UPDATE=1 rewrites them (then review the diff).
function golden(t: { equal: (a: string, b: string, m: string) => void }, name: string, actual: string): void {
  const url = new URL(`./golden/${name}`, import.meta.url);
  if (process.env['GOLDEN_UPDATE'] === '1') writeFileSync(url, actual);
  t.equal(actual, readFileSync(url, 'utf8'), `${name} (GOLDEN_UPDATE=1 to accept a change)`);
}

const cli = testCli();

const pages: Record<string, string[]> = {
  'root-help.txt': ['--help'],
  'review-submit-help.txt': ['review', 'submit', '--help'],
  'review-topic-help.txt': ['review', '--help'],
};

t.test('help pages', async (t) => {
  t.plan(Object.keys(pages).length * 2);
  for (const [file, argv] of Object.entries(pages)) {
    const r = await runCli(cli, argv);
    t.equal(r.code, 0, `${argv.join(' ')} exits 0`);
    golden(t, file, r.stdout);
  }
});

t.test('help for a command through `help <command>` is the same page', async (t) => {
  const a = await runCli(cli, ['help', 'review', 'submit']);
  const b = await runCli(cli, ['review', 'submit', '--help']);
  t.equal(a.stdout, b.stdout);
});

t.test('manifest text and MCP JSON', async (t) => {
  golden(t, 'manifest.txt', manifestText(TEST_TOOLS));
  golden(t, 'mcp.json', `${JSON.stringify(mcpTools(TEST_TOOLS), null, 2)}\n`);
});

t.test('the manifest text carries the pieces agents rely on', async (t) => {
  const text = manifestText(TEST_TOOLS);
  t.match(text, "--comments|--comment '<json>'");
  t.match(text, '--labels|--label <string>');
  t.match(text, '--draft|--no-draft');
  t.match(text, '--event APPROVE|REQUEST_CHANGES|COMMENT');
  t.match(text, '    # example: --comments \'[{"path":"src/a.ts"');
  t.match(text, '## shell-safety rules');
  t.match(text, /One stdin per invocation/);
  t.notMatch(text, /request-id|requestId/, 'gadgetOnly params are not flags');
});
