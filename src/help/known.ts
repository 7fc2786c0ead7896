/**
 * How the CLIs whose trees ship in the package are crawled. az lists about 1,600 commands
 * (more than a tree may hold), so its tree stops at the first level; curl has no
 * subcommands, so its tree is the one level of options `curl --help all` prints.
 */
import type { CrawlBudgets } from './crawl.js';
import type { CrawlSettings } from './document.js';

export interface KnownCli extends CrawlSettings {
  maxDepth: number;
  budgets?: Partial<CrawlBudgets>;
}

export const KNOWN_CLIS: Readonly<Record<string, KnownCli>> = Object.freeze({
  gh: { entrypoint: 'gh', helpArgs: ['--help'], list: 'commands', maxDepth: 3 },
  // az takes about 2 s for one page here (Python start-up and its command index), and up to
  // 4 s for `--version` (which tries to check for a newer release): a generous budget.
  az: {
    entrypoint: 'az',
    helpArgs: ['--help'],
    list: 'commands',
    maxDepth: 1,
    budgets: { timeMs: 240_000, perCallMs: 120_000 },
  },
  curl: { entrypoint: 'curl', helpArgs: ['--help', 'all'], list: 'options', maxDepth: 1 },
});

/** The crawl settings for `id`: a known CLI's, else `<id> --help` as a bare name, three levels. */
export function crawlSettingsFor(id: string): KnownCli {
  return Object.hasOwn(KNOWN_CLIS, id)
    ? KNOWN_CLIS[id]!
    : { entrypoint: id, helpArgs: ['--help'], list: 'commands', maxDepth: 3 };
}
