/**
 * The description an agent reads for the tool `<id>_cli`, built from the CLI's help tree:
 * its summary and its top-level commands, within a size budget, saying when the list is
 * not the whole CLI. Pure; the same tree and budget always give the same text.
 */
import type { HelpCommand, HelpTree } from '../manifest/types.js';

/** The budget a host gives when it has no other: the text stays well under a tool description's usual limits. */
export const DEFAULT_DESCRIPTION_CHARS = 1500;

const clip = (s: string, n: number): string =>
  s.length <= n ? s : `${s.slice(0, Math.max(0, n - 1)).trimEnd()}…`;

/**
 * `<summary> Commands: a (…), b (…), …` in at most `budgetChars` characters. Summaries are
 * dropped before commands are; commands that still do not fit are counted (`and 12 more`).
 * A tree cut at its crawl depth, or a list cut here, says so and that `<id> <command> --help`
 * answers the rest.
 */
export function describeCli(
  id: string,
  tree: HelpTree | undefined,
  budgetChars: number = DEFAULT_DESCRIPTION_CHARS,
): string {
  const fallback = `Run the ${id} CLI through clibroker's governing proxy.`;
  const head = tree?.summary?.trim() ? `${id}: ${tree.summary.trim()}` : fallback;
  const cmds: readonly HelpCommand[] = tree?.commands ?? [];
  if (cmds.length === 0) return clip(head, budgetChars);
  const options = cmds.every((c) => c.name.startsWith('-'));
  const label = options ? 'Options' : 'Commands';
  const deeper =
    tree?.partial && !options
      ? ` The tree was crawled to a limited depth (${tree.partial.reason}); '${id} <command> --help' answers for the rest.`
      : '';

  const attempt = (withSummaries: boolean, shown: number): string => {
    const items = cmds
      .slice(0, shown)
      .map((c) => (withSummaries && c.summary ? `${c.name} (${clip(c.summary, 80)})` : c.name));
    const rest = cmds.length - shown;
    const tail =
      rest > 0 ? `, and ${rest} more (the list is partial; '${id} --help' tells how to list them all)` : '';
    return `${head} ${label}: ${items.join(', ')}${tail}.${deeper}`;
  };
  for (const withSummaries of [true, false]) {
    const full = attempt(withSummaries, cmds.length);
    if (full.length <= budgetChars) return full;
  }
  // names only, as many as fit: the longest prefix whose text is within the budget
  let lo = 0;
  let hi = cmds.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (attempt(false, mid).length <= budgetChars) lo = mid;
    else hi = mid - 1;
  }
  return clip(attempt(false, lo), budgetChars);
}
