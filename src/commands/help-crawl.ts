/**
 * `clibroker helptree crawl`: crawl a CLI's `--help` pages into a help tree, in the isolated
 * sandbox with no network (every request the CLI tries is refused and listed in the
 * document's `networkAttempts`). `help` cannot be the topic: `clibroker help <topic>` is
 * this CLI's own help. An operator's tool (it runs programs on the host): `agent manifest`
 * leaves it out. The crawler (src/help) is imported only when the command runs.
 */
import { defineTool } from '../cli/define.js';

export const helptreeCrawl = defineTool({
  namespace: 'helptree',
  name: 'crawl',
  description: [
    "Crawl a CLI's help (<cli> [command…] --help) into a help tree: at most 3 levels and 512 commands, within time and output budgets, in the isolated sandbox with no network.",
    'data is the tree document {cli, version, maxDepth, crawl, tree, networkAttempts?}; --out also writes it byte for byte as committed in help-trees/.',
    'gh, az and curl use the settings their committed trees were made with; any other id is run as a bare name with --help, or as --manifest-file declares it.',
  ].join('\n'),
  parameters: {
    cli: { type: 'string', describe: 'the CLI id (gh, az, curl, or the id of a CLI in --manifest-file)' },
    manifest: {
      type: 'object',
      optional: true,
      describe:
        'an extension manifest declaring the CLI: its binary.entrypoint, env and helpCrawl.maxDepth are used',
    },
    entrypoint: {
      type: 'string',
      optional: true,
      describe: 'the program to run instead (an absolute path or a bare name on the child PATH)',
    },
    maxDepth: {
      type: 'number',
      integer: true,
      min: 1,
      max: 3,
      optional: true,
      describe: 'levels below the root, 1..3; default the known setting, else helpCrawl.maxDepth, else 3',
    },
    timeBudget: {
      type: 'number',
      integer: true,
      min: 1,
      max: 3600,
      optional: true,
      describe: 'seconds for the whole crawl; default 120 (az: 240)',
    },
    out: {
      type: 'string',
      optional: true,
      describe: 'also write the document to this file (canonical JSON, as in help-trees/)',
    },
    allowPlain: {
      type: 'boolean',
      default: false,
      describe: 'crawl in the plain profile where bubblewrap cannot run (the CLI then has the host network)',
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
    ],
  },
  examples: [
    {
      params: { cli: 'gh', out: 'help-trees/gh.json' },
      comment: 'crawl the installed gh three levels deep and write its tree',
      output: {
        cli: 'gh',
        version: 'gh version 2.23.0 (2023-02-27 Debian 2.23.0+dfsg1-1)',
        maxDepth: 3,
        tree: { summary: 'Work seamlessly with GitHub from the command line.', commands: [] },
      },
    },
  ],
  outputShape:
    "{cli, version, maxDepth, crawl: {entrypoint, helpArgs, list: 'commands'|'options'}, tree: {summary?, partial?: {reason}, commands: {name, summary?, commands?}[]}, networkAttempts?: {command, method, target}[]}",
  async run(p) {
    const { crawlSettingsFor } = await import('../help/known.js');
    const { generateHelpTreeDocument } = await import('../help/generate.js');
    const { serializeHelpTreeDocument } = await import('../help/document.js');
    const settings = { ...crawlSettingsFor(p.cli) };
    let env: Record<string, string> | undefined;
    if (p.manifest) {
      const clis = (p.manifest as { clis?: unknown }).clis;
      const declared = Array.isArray(clis)
        ? (clis as { id?: unknown }[]).find((c) => c?.id === p.cli)
        : undefined;
      if (!declared) throw new Error(`the manifest declares no CLI '${p.cli}'`);
      const d = declared as {
        binary?: { entrypoint?: unknown };
        env?: Record<string, string>;
        helpCrawl?: { maxDepth?: unknown };
      };
      if (typeof d.binary?.entrypoint === 'string') settings.entrypoint = d.binary.entrypoint;
      if (typeof d.helpCrawl?.maxDepth === 'number') settings.maxDepth = d.helpCrawl.maxDepth;
      env = d.env;
    }
    if (p.entrypoint) settings.entrypoint = p.entrypoint;
    if (p.maxDepth) settings.maxDepth = p.maxDepth;
    const budgets = { ...settings.budgets, ...(p.timeBudget ? { timeMs: p.timeBudget * 1000 } : {}) };
    const { document } = await generateHelpTreeDocument({
      cli: p.cli,
      ...settings,
      budgets,
      ...(env ? { env } : {}),
      allowPlain: p.allowPlain,
    });
    if (p.out) {
      const { writeFile } = await import('node:fs/promises');
      await writeFile(p.out, serializeHelpTreeDocument(document));
    }
    return document;
  },
});
