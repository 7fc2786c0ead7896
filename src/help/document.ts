/**
 * The committed form of a crawled tree: `help-trees/<cli>.json`, holding the CLI's id, the
 * version the crawl read, how it was crawled, and the tree. Serialized canonically (fixed key
 * order, two-space indent, one trailing newline) so two crawls of the same binary give the
 * same bytes and a diff shows only what the CLI changed.
 */
import type { HelpCommand, HelpTree } from '../manifest/types.js';
import type { NetworkAttempt } from './crawl.js';

/** How a tree was crawled: enough to crawl it again the same way. */
export interface CrawlSettings {
  /** the program, as a bare name (no machine path) */
  entrypoint: string;
  helpArgs: string[];
  list: 'commands' | 'options';
}

export interface HelpTreeDocument {
  cli: string;
  /** the first line of `<cli> --version` (see crawl.ts versionLine) */
  version: string;
  maxDepth: number;
  crawl: CrawlSettings;
  tree: HelpTree;
  /** requests the CLI tried while printing help, refused (absent when none) */
  networkAttempts?: NetworkAttempt[];
}

function canonicalCommand(c: HelpCommand): HelpCommand {
  return {
    name: c.name,
    ...(c.summary ? { summary: c.summary } : {}),
    ...(c.commands?.length ? { commands: c.commands.map(canonicalCommand) } : {}),
  };
}

/** The tree with only its known fields, in a fixed order (summary, partial, commands; name, summary, commands). */
export function canonicalTree(tree: HelpTree): HelpTree {
  return {
    ...(tree.summary ? { summary: tree.summary } : {}),
    ...(tree.partial ? { partial: { reason: tree.partial.reason } } : {}),
    commands: tree.commands.map(canonicalCommand),
  };
}

/** The document's bytes: the same input always gives the same text. */
export function serializeHelpTreeDocument(doc: HelpTreeDocument): string {
  const out: HelpTreeDocument = {
    cli: doc.cli,
    version: doc.version,
    maxDepth: doc.maxDepth,
    crawl: { entrypoint: doc.crawl.entrypoint, helpArgs: [...doc.crawl.helpArgs], list: doc.crawl.list },
    tree: canonicalTree(doc.tree),
    ...(doc.networkAttempts?.length
      ? {
          networkAttempts: doc.networkAttempts.map((a) => ({
            command: a.command,
            method: a.method,
            target: a.target,
          })),
        }
      : {}),
  };
  return `${JSON.stringify(out, null, 2)}\n`;
}

/** Counts every command of a tree, at every level. */
export function countCommands(commands: readonly HelpCommand[]): number {
  let n = 0;
  const stack = [...commands];
  while (stack.length > 0) {
    const c = stack.pop()!;
    n += 1;
    if (c.commands) stack.push(...c.commands);
  }
  return n;
}
