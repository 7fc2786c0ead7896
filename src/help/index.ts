/**
 * Help trees: help answered without running the CLI, and the `<id>_cli` description.
 * This door imports nothing heavy (no sandbox, no child process): a host can load it on
 * every call. The crawler is `./crawl.js` and `./generate.js`.
 */
export { answerHelpFromTree } from './answer.js';
export { COMMITTED_TREES, committedHelpTree, helpTreeFor } from './committed.js';
export { DEFAULT_DESCRIPTION_CHARS, describeCli } from './describe.js';
export type { CrawlSettings, HelpTreeDocument } from './document.js';
export type { CrawlBudgets, CrawlOptions, CrawlResult, NetworkAttempt, PartialReason } from './crawl.js';
