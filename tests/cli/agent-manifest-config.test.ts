/**
 * `clibroker agent manifest --config`: the `<id>_cli` tools the operator's configuration
 * offers, as an agent is handed them — and nothing an agent could use to pick a manifest, a
 * credential, an endpoint or a tier, nor any operator command.
 */
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import t from 'tap';
import { buildBinary, spawnWith } from './fixtures/helpers.js';
import { seedDeployment } from '../helpers/seed.js';

const { bin } = await buildBinary();
t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));

const OPERATOR_WORDS =
  /vendor run|--manifest|--endpoint|--connection|organizationCeiling|approvals approve|tiers set|config validate|store migrate|helptree|daemon --config|serve --config|doctor/;

t.test(
  'the configured tools, described from their help trees, with {args, stdin?} as their only input',
  async (t) => {
    const d = await seedDeployment();
    t.teardown(() => d.close());
    const mcp = spawnWith(bin, ['agent', 'manifest', '--config', d.file, '--format', 'mcp']);
    t.equal(mcp.code, 0, mcp.stderr);
    const tools = mcp.data as {
      name: string;
      description: string;
      inputSchema: { properties: Record<string, unknown>; required: string[]; additionalProperties: boolean };
    }[];
    t.same(
      tools.map((x) => x.name),
      ['gh_cli', 'curl_cli', 'az_cli'],
    );
    for (const x of tools) {
      t.same(
        Object.keys(x.inputSchema.properties).sort(),
        ['args', 'stdin'],
        `${x.name}: args and stdin only`,
      );
      t.same(x.inputSchema.required, ['args']);
      t.equal(x.inputSchema.additionalProperties, false);
      t.match(x.description, /at most 256 arguments/);
    }
    t.match(
      tools[0]!.description,
      /^gh: Work seamlessly with GitHub from the command line\. Commands: .*repo/,
      'gh is described from its shipped help tree',
    );
    for (const format of ['openai', 'anthropic'] as const) {
      const r = spawnWith(bin, ['agent', 'manifest', '--config', d.file, '--format', format]);
      t.equal(r.code, 0, `${format}: ${r.stderr}`);
      t.equal((r.data as unknown[]).length, 3);
    }
    const text = spawnWith(bin, ['agent', 'manifest', '--config', d.file]);
    t.equal(text.code, 0);
    const page = String(text.data);
    t.match(page, /usage: clibroker run gh_cli \[--stdin-file <path\|->\] -- <args…>/);
    t.match(page, /## az_cli \(tool id azure:cli:az\)/);
    t.match(page, /clibroker resume <approval-id>/);
    t.notMatch(page, OPERATOR_WORDS, 'no operator command or setting');
    t.notMatch(
      page,
      new RegExp(d.dir.dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
      'no path of the configuration',
    );
  },
);

t.test('a configuration that does not load gives no manifest', async (t) => {
  const d = await seedDeployment((c) => ({
    ...c,
    images: { ...c.images, gh: { ...c.images['gh']!, sha256: '0'.repeat(64) } },
  }));
  t.teardown(() => d.close());
  const r = spawnWith(bin, ['agent', 'manifest', '--config', d.file, '--format', 'mcp']);
  t.equal(r.code, 1);
  t.match(r.env, { success: false });
  t.match(r.stdout, /CONFIG_IMAGE_HASH_MISMATCH/);
});

t.test('without a configuration the manifest offers no operator command', async (t) => {
  const r = spawnWith(bin, ['agent', 'manifest', '--format', 'mcp']);
  t.equal(r.code, 0);
  const names = (r.data as { name: string }[]).map((x) => x.name);
  t.same(names, ['run', 'resume', 'policy_classify'], 'the agent-facing commands only: an allowlist');
  for (const op of [
    'vendor_run',
    'vendor_resume',
    'approvals_list',
    'audit_query',
    'conformance',
    'approvals_approve',
    'approvals_reject',
    'tiers_set',
    'config_validate',
    'doctor',
    'store_migrate',
    'helptree_crawl',
    'daemon',
    'serve',
  ])
    t.notOk(names.includes(op), `${op} is not offered`);
});
