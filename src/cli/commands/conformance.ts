/**
 * `clibroker conformance`: whether a CLI can be governed, tried for real — its read and write
 * commands run once each through the broker and the sandbox against the embedded mock
 * vendor, the checks in their fixed order, the first failing one the verdict. An operator's
 * tool (it runs programs on the host): `agent manifest` leaves it out. The back-end
 * (src/conformance) is imported only when the command runs.
 */
import { defineTool } from '../define.js';
import { fail } from '../envelope.js';

export const conformance = defineTool({
  name: 'conformance',
  description: [
    'Check that a CLI can run governed: its read command (at tier read) and write command (at tier write) run once each through the broker and the sandbox against the embedded mock vendor.',
    'data is the report {cli, verdict: pass|refused, reason?, checks: [{name, code, ok, evidence}]}: the checks in their fixed order, the first failing one the reason (a CONFORMANCE_* code).',
    'gh, curl and az come with their manifest, vendor and commands; any other CLI needs --manifest-file and --probe.',
  ].join('\n'),
  parameters: {
    cli: { type: 'string', describe: 'the CLI id (gh, curl, az, or the id of a CLI in --manifest-file)' },
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
      params: { cli: 'gh', format: 'table' },
      comment: 'check the installed gh against the embedded GitHub-like vendor',
      output:
        'gh: pass\n\n#   check                ok  code  evidence\n1   starts               ok        2 command(s) started in the plain profile\n…',
    },
  ],
  outputShape:
    '{cli, verdict: "pass"|"refused", reason?: string, checks: {name, code, ok: boolean, notReached?: true, evidence}[]} (format json) or string (format table)',
  async run(p) {
    const { knownConformance, mockVendor, runConformance, conformanceTable } = await import(
      '../../conformance/index.js'
    );
    const { defineExtension } = await import('../../manifest/define.js');
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
