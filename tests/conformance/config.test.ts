/**
 * Conformance as a gate, end to end: a configuration that requires conformance withholds its
 * tools until `clibroker conformance --config` has tried each pinned image through the real
 * broker and sandbox and recorded a pass for its sha256 in the configuration's store; a
 * refused program stays withheld with the refusal's code; a waived image is offered.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { BUNDLED_TOOLS } from '../../src/commands/index.js';
import { loadConfig } from '../../src/config/index.js';
import { conformanceWithheld } from '../../src/conformance/index.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { runCli, testCli } from '../cli/fixtures/helpers.js';
import { configDir } from '../helpers/config.js';
import { atlassianExtension } from '../manifest/fixtures.js';

const cli = testCli(BUNDLED_TOOLS);

t.test('verdicts recorded by conformance --config open the gate for passing programs only', async (t) => {
  const d = configDir();
  t.teardown(() => d.remove());
  // a program that never talks to the vendor: refused
  const dir = join(d.dir, 'broken');
  mkdirSync(dir, { mode: 0o755 });
  chmodSync(dir, 0o755);
  const broken = join(dir, 'curl');
  writeFileSync(broken, '#!/bin/sh\nexit 3\n', { mode: 0o755 });
  chmodSync(broken, 0o755);
  const ext = (id: string, image: string) => {
    const m = atlassianExtension();
    m.id = id;
    m.clis[0]!.binary = { image, entrypoint: 'curl' };
    return {
      ...d.manifest(m),
      connection: { kind: 'basic' as const, username: 'bot', password: d.secret(id, 'a-secret-value') },
    };
  };
  const file = d.write({
    version: 1,
    organization: { ceiling: 'write' },
    conformance: 'required',
    images: {
      base: d.image('/usr/bin/curl'),
      broken: d.image(broken),
      spare: { ...d.image(broken), conformance: 'waived' },
    },
    extensions: {
      atlassian: ext('atlassian', 'base'),
      confluence: ext('confluence', 'broken'),
      wiki: ext('wiki', 'spare'),
    },
    store: 'state/store.db',
  });
  const config = await loadConfig(file);
  t.same(
    config.tools.map((x) => [x.id, x.image.name, x.image.conformance]),
    [
      ['atlassian:cli:curl', 'base', 'required'],
      ['confluence:cli:curl', 'broken', 'required'],
      ['wiki:cli:curl', 'spare', 'waived'],
    ],
    "the configuration's conformance, unless the image waives it",
  );

  const gate = async () => {
    const store = openSqliteStore(config.store);
    try {
      const r = await conformanceWithheld(config.tools, store);
      return { offered: r.offered.map((x) => x.id), withheld: r.withheld.map((w) => [w.id, w.code]) };
    } finally {
      await store.close();
    }
  };
  mkdirSync(join(d.dir, 'state'));
  t.same(
    await gate(),
    {
      offered: ['wiki:cli:curl'],
      withheld: [
        ['atlassian:cli:curl', 'TOOL_VENDOR_CLI_CONFORMANCE_UNVERIFIED'],
        ['confluence:cli:curl', 'TOOL_VENDOR_CLI_CONFORMANCE_UNVERIFIED'],
      ],
    },
    'before any run: only the waived image is offered',
  );

  const r = await runCli(cli, ['conformance', '--config', file, '--deadline', '20']);
  t.equal(r.code, 0, r.stdout + r.stderr);
  const images = (r.env as { data: { images: Record<string, unknown>[] } }).data.images;
  t.match(images, [
    {
      image: 'base',
      executable: '/usr/bin/curl',
      sha256: config.images.get('base')!.sha256,
      tools: ['atlassian:cli:curl'],
      verdict: 'pass',
      recordedAt: String,
    },
    { image: 'broken', verdict: 'refused', reason: /^CONFORMANCE_/, tools: ['confluence:cli:curl'] },
    // the waived image runs the same program: tried too, the same sha256
    { image: 'spare', verdict: 'refused' },
  ]);
  t.notOk('reason' in images[0]!, 'a pass has no reason');

  const after = await gate();
  t.same(after.offered, ['atlassian:cli:curl', 'wiki:cli:curl']);
  t.same(after.withheld, [['confluence:cli:curl', 'TOOL_VENDOR_CLI_CONFORMANCE_FAILED']]);

  const only = await runCli(cli, ['conformance', '--config', file, '--cli', 'atlassian__curl_cli']);
  t.equal(only.code, 0, only.stdout);
  t.same(
    (only.env as { data: { images: { image: string }[] } }).data.images.map((i) => i.image),
    ['base'],
    '--cli: only that tool’s image',
  );
  const none = await runCli(cli, ['conformance', '--config', file, '--cli', 'nope_cli']);
  t.equal(none.code, 1, 'an unknown tool is refused');
  t.match(none.stdout + none.stderr, /offers no tool 'nope_cli'/);
});
