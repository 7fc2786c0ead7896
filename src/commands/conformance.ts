/**
 * `clibroker conformance`: whether a CLI can be governed, tried for real — its read and write
 * commands run once each through the broker and the sandbox against the embedded mock
 * vendor, the checks in their fixed order, the first failing one the verdict. An operator's
 * tool (it runs programs on the host): `agent manifest` leaves it out. The back-end
 * (src/conformance) is imported only when the command runs.
 *
 * With `--config`, it tries the configuration's pinned images instead, each as pinned (its
 * executable, its profile), and records every verdict in the configuration's store by the
 * program's sha256: the conformance gate offers a gated image's tools only after a pass.
 */
import { defineTool } from '../cli/define.js';
import type { ImageToTry } from '../conformance/images.js';
import { fail } from '../cli/envelope.js';

export const conformance = defineTool({
  name: 'conformance',
  description: [
    'Check that a CLI can run governed: its read command (at tier read) and write command (at tier write) run once each through the broker and the sandbox against the embedded mock vendor.',
    'data is the report {cli, verdict: pass|refused, reason?, checks: [{name, code, ok, evidence}]}: the checks in their fixed order, the first failing one the reason (a CONFORMANCE_* code).',
    'gh, curl and az come with their manifest, vendor and commands; any other CLI needs --manifest-file and --probe.',
    "With --config: try each pinned image of the configuration as pinned (only those of --cli, a tool name, tool id or CLI id, when given) and record its verdict in the configuration's store by the program's sha256; data is {config, store, images: [{image, executable, sha256, tools, verdict?, reason?, recordedAt?, skipped?}]}. An image whose conformance is required is offered only once its latest verdict is a pass.",
  ].join('\n'),
  parameters: {
    cli: {
      type: 'string',
      optional: true,
      describe:
        'the CLI id (gh, curl, az, or the id of a CLI in --manifest-file); with --config, the tool (name, id or CLI id) whose image to try',
    },
    config: {
      type: 'string',
      optional: true,
      describe:
        'an operator configuration: try its pinned images and record the verdicts in its store (docs/config.md)',
    },
    manifest: {
      type: 'object',
      optional: true,
      describe: 'the extension manifest declaring the CLI (replaces the built-in one for gh, curl and az)',
    },
    probe: {
      type: 'object',
      optional: true,
      properties: {
        read: { type: 'array', items: { type: 'string' }, describe: 'the read command (the CLI argv)' },
        write: { type: 'array', items: { type: 'string' }, optional: true, describe: 'the write command' },
        stdin: { type: 'string', optional: true, describe: 'stdin for both' },
      },
      describe: 'the commands to try, {read: [...], write?: [...]}; default for gh, curl and az',
    },
    vendor: {
      type: 'enum',
      values: ['github', 'azure'],
      optional: true,
      describe: 'the embedded mock vendor to run against; default github (az: azure)',
    },
    deadline: {
      type: 'number',
      integer: true,
      min: 1,
      max: 270,
      default: 60,
      describe: 'seconds per command; a CLI still running then is refused as interactive',
    },
    format: {
      type: 'enum',
      values: ['json', 'table'],
      default: 'json',
      describe: 'json: the report; table: one text table (read it with jq -r .data)',
    },
  },
  cli: {
    fileInputAlternatives: [
      {
        paramName: 'manifest',
        fileFlag: 'manifest-file',
        parseAs: 'json',
        description: 'read the extension manifest JSON from a file',
      },
      {
        paramName: 'probe',
        fileFlag: 'probe-file',
        parseAs: 'json',
        description: 'read the commands to try from a JSON file',
      },
    ],
  },
  examples: [
    {
      params: { config: '/etc/clibroker/config.json' },
      comment: 'try every pinned image of the configuration and record the verdicts in its store',
    },
    {
      params: { cli: 'gh', format: 'table' },
      comment: 'check the installed gh against the embedded GitHub-like vendor',
      output:
        'gh: pass\n\n#   check                ok  code  evidence\n1   starts               ok        2 command(s) started in the plain profile\n…',
    },
  ],
  outputShape:
    '{cli, verdict: "pass"|"refused", reason?: string, checks: {name, code, ok: boolean, notReached?: true, evidence}[]} (format json) or string (format table); with --config: {config, store, images: {image, executable, sha256, tools: string[], verdict?, reason?, recordedAt?, skipped?}[]}',
  async run(p) {
    if (p.config !== undefined) {
      return configuredConformance(p.config, p.cli, p.deadline * 1000);
    }
    if (p.cli === undefined)
      fail('missing-required', 'conformance needs --cli <id>, or --config <file> to try its pinned images', {
        flag: 'cli',
        expected:
          'clibroker conformance --cli gh | clibroker conformance --config /etc/clibroker/config.json',
      });
    const { knownConformance, mockVendor, runConformance, conformanceTable } = await import(
      '../conformance/index.js'
    );
    const { defineExtension } = await import('../manifest/define.js');
    const known = knownConformance(p.cli);
    if (!known && !p.manifest)
      fail(
        'missing-required',
        `clibroker knows no CLI '${p.cli}': pass the manifest declaring it (--manifest-file) and the commands to try (--probe)`,
        {
          flag: 'manifest-file',
          expected: `clibroker conformance --cli ${p.cli} --manifest-file ext.json --probe '{"read":["..."]}'`,
        },
      );
    const extension = p.manifest ? defineExtension(p.manifest as never) : known!.extension;
    if (!extension.clis.some((c) => c.id === p.cli))
      fail('flag-parse', `the manifest declares no CLI '${p.cli}'`, {
        flag: 'cli',
        expected: extension.clis.map((c) => c.id).join(', '),
      });
    const probe =
      (p.probe as { read: string[]; write?: string[]; stdin?: string } | undefined) ?? known?.probe;
    if (!probe)
      fail(
        'missing-required',
        `--probe is needed for '${p.cli}': the read command to try, and the write command if the CLI writes`,
        { flag: 'probe', expected: `--probe '{"read":["..."],"write":["..."]}'` },
      );
    const report = await runConformance({
      extension,
      cli: p.cli,
      probe,
      ...mockVendor(p.vendor ?? known?.vendor ?? 'github'),
      deadlineMs: p.deadline * 1000,
    });
    return p.format === 'table' ? conformanceTable(report) : report;
  },
});

/** `--config`: try the configuration's pinned images (those of `cli` when given) and record each verdict in its store. */
async function configuredConformance(file: string, cli: string | undefined, deadlineMs: number) {
  const [{ loadConfig }, { conformImages }, { openConfiguredStore }] = await Promise.all([
    import('../config/load.js'),
    import('../conformance/images.js'),
    import('../host/store.js'),
  ]);
  const config = await loadConfig(file);
  const tools = config.tools.filter(
    (t) => cli === undefined || t.name === cli || t.id === cli || t.cliId === cli,
  );
  if (cli !== undefined && tools.length === 0)
    fail('flag-parse', `the configuration offers no tool '${cli}'`, {
      flag: 'cli',
      expected: config.tools.map((t) => t.name).join(', ') || '(none offered)',
    });
  const images = new Map<string, ImageToTry>();
  for (const t of tools) {
    const img = images.get(t.image.name) ?? { ...t.image, tools: [] };
    images.set(t.image.name, { ...img, tools: [...img.tools, { id: t.id, cliId: t.cliId }] });
  }
  // as a host opens it (a SQLite directory created 0700 when missing, PostgreSQL never
  // migrated), without starting retention: this command only records verdicts
  const store = await openConfiguredStore(config, { retention: false });
  try {
    const results = await conformImages([...images.values()], store, {
      deadlineMs,
      hiddenPaths: config.hiddenPaths,
    });
    return {
      config: config.file,
      store: config.store,
      images: results.map((r) => ({
        image: r.image,
        executable: r.executable,
        sha256: r.sha256,
        tools: r.tools,
        ...(r.recorded
          ? {
              verdict: r.recorded.verdict,
              ...(r.recorded.code ? { reason: r.recorded.code } : {}),
              recordedAt: r.recorded.time,
            }
          : {}),
        ...(r.skipped ? { skipped: r.skipped } : {}),
      })),
    };
  } finally {
    await store.close();
  }
}
