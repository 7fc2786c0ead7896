/**
 * A crawl made into the document that is committed: `help-trees/<cli>.json`. Used by the
 * generator script, `clibroker helptree crawl` and the test that compares the installed
 * binaries with what is committed.
 */
import { BrokerError } from '../errors.js';
import { type CrawlOptions, type CrawlResult, crawlHelpTree } from './crawl.js';
import { type CrawlSettings, type HelpTreeDocument, canonicalTree } from './document.js';

export interface GenerateOptions
  extends CrawlSettings,
    Pick<CrawlOptions, 'budgets' | 'concurrency' | 'env' | 'readOnlyPaths' | 'allowPlain'> {
  cli: string;
  maxDepth: number;
}

/**
 * Crawls and returns the document with the crawl's own report beside it.
 * @throws BrokerError HELP_CRAWL_FAILED also when the version could not be read (a committed
 *   tree without a version could never be checked against the binary)
 */
export async function generateHelpTreeDocument(
  opts: GenerateOptions,
): Promise<{ document: HelpTreeDocument; result: CrawlResult }> {
  const result = await crawlHelpTree({
    entrypoint: opts.entrypoint,
    maxDepth: opts.maxDepth,
    helpArgs: opts.helpArgs,
    list: opts.list,
    ...(opts.budgets ? { budgets: opts.budgets } : {}),
    ...(opts.concurrency ? { concurrency: opts.concurrency } : {}),
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.readOnlyPaths ? { readOnlyPaths: opts.readOnlyPaths } : {}),
    ...(opts.allowPlain ? { allowPlain: true } : {}),
  });
  if (!result.version) throw new BrokerError('HELP_CRAWL_FAILED', { details: { phase: 'version' } });
  const document: HelpTreeDocument = {
    cli: opts.cli,
    version: result.version,
    maxDepth: opts.maxDepth,
    crawl: {
      entrypoint: opts.entrypoint.replace(/^.*\//, ''),
      helpArgs: [...opts.helpArgs],
      list: opts.list,
    },
    tree: canonicalTree(result.tree),
    ...(result.networkAttempts.length ? { networkAttempts: result.networkAttempts } : {}),
  };
  return { document, result };
}
