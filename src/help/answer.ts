/**
 * Help answered from a crawled tree instead of the CLI: `--help`, `-h` or `help <command>`
 * on a command that has subcommands. Pure and synchronous (no I/O, no imports beyond types),
 * so a host can ask it before starting a sandbox or a broker session; `undefined` means
 * "run the real CLI" (a leaf's flags, anything the tree does not know, any other argument).
 */
import type { HelpCommand, HelpTree } from '../manifest/types.js';

const HELP_FLAGS = new Set(['--help', '-h']);

/** Option rows (curl's one level of options) are not subcommands: a page of them is the CLI's own. */
const isCommand = (c: HelpCommand): boolean => !c.name.startsWith('-');

/** The words of a help request, or undefined when `args` is anything else. */
function helpPath(tree: HelpTree, args: readonly string[]): string[] | undefined {
  if (args[0] === 'help' && !tree.commands.some((c) => c.name === 'help')) {
    const rest = args.slice(1);
    return rest.some((a) => a.startsWith('-')) ? undefined : rest;
  }
  const flags = args.filter((a) => HELP_FLAGS.has(a));
  if (flags.length !== 1) return undefined;
  const words = args.filter((a) => !HELP_FLAGS.has(a));
  // Any other flag (`--repo x --help`) could change what the CLI prints: let it answer.
  return words.some((a) => a.startsWith('-') || a === '') ? undefined : words;
}

/** The node at `path`, or undefined when a word names nothing in the tree. */
function nodeAt(
  tree: HelpTree,
  path: readonly string[],
): { summary?: string; commands: readonly HelpCommand[] } | undefined {
  let node: { summary?: string; commands?: readonly HelpCommand[] } = tree;
  for (const word of path) {
    const next: HelpCommand | undefined = node.commands?.find((c) => c.name === word);
    if (!next) return undefined;
    node = next;
  }
  return { ...(node.summary ? { summary: node.summary } : {}), commands: node.commands ?? [] };
}

const MAX_NAME_COLUMN = 24;

/**
 * The tree's page for the command `args` asks help for, or undefined to run the real CLI.
 * The page: the command and its summary, its subcommands with their summaries in the tree's
 * order, and how to get more (`<command> --help` still reaches the CLI for a leaf, and for
 * what a partial tree left out).
 * @param program the CLI's name as the agent types it (`gh`); used in the page only
 */
export function answerHelpFromTree(
  tree: HelpTree,
  args: readonly string[],
  program = 'cli',
): string | undefined {
  const path = helpPath(tree, args);
  if (!path) return undefined;
  const node = nodeAt(tree, path);
  const subs = node?.commands.filter(isCommand) ?? [];
  if (!node || subs.length === 0) return undefined;
  const title = [program, ...path].join(' ');
  const width = Math.min(MAX_NAME_COLUMN, Math.max(...subs.map((c) => c.name.length)));
  const lines = [node.summary ? `${title}: ${node.summary}` : title, '', 'Commands:'];
  for (const c of subs) lines.push(c.summary ? `  ${c.name.padEnd(width)}  ${c.summary}` : `  ${c.name}`);
  lines.push(
    '',
    `Run '${title} <command> --help' for a command's own help (flags, arguments); that runs ${program} itself.`,
  );
  if (tree.partial) {
    lines.push(
      `This help tree is partial (${tree.partial.reason}): commands below those listed may be missing here; '${title} <command> --help' still answers.`,
    );
  }
  return `${lines.join('\n')}\n`;
}
