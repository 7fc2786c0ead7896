/**
 * crawlHelpTree: `<cli> [cmd…] --help`, level by level, in the sandbox with no network.
 * Reads top to bottom: check isolation → the root page (and the version) → each level's
 * pages, a few at a time → the children attached in page order → the tree.
 *
 * Deterministic by construction: a level's pages are all read before any child is attached,
 * and children are attached in the order the pages list them, so which commands fit a budget
 * does not depend on which page came back first. No timestamp, duration or path goes in the
 * tree.
 */
import { BrokerError, brokerError } from '../errors.js';
import type { HelpCommand, HelpTree } from '../manifest/types.js';
import { isolationUnavailable, runSandboxed } from '../sandbox/index.js';
import { type HelpEntry, parseHelp, parseOptions } from './parse.js';
import { startRefusingProxy } from './refuse-proxy.js';

/** Why a crawl stopped early. Only `max_depth` is accepted when an extension loads. */
export type PartialReason = 'max_depth' | 'time_budget' | 'command_budget' | 'output_budget' | 'help_failed';

export interface CrawlBudgets {
  /** the whole crawl, every page included */
  timeMs: number;
  /** commands in the tree (the manifest accepts at most 512) */
  maxCommands: number;
  /** help text read, all pages together (UTF-8 bytes) */
  maxOutputBytes: number;
  /** one help page */
  perCallMs: number;
}

export const DEFAULT_CRAWL_BUDGETS: Readonly<CrawlBudgets> = Object.freeze({
  timeMs: 120_000,
  maxCommands: 512,
  maxOutputBytes: 16 * 1024 * 1024,
  perCallMs: 30_000,
});

/** The deepest crawl: a command path of at most three words. */
export const MAX_CRAWL_DEPTH = 3;

export interface CrawlOptions {
  /** the program: an absolute path, or a bare name on the child's PATH */
  entrypoint: string;
  /** levels of commands below the root, 1..3; default 3 */
  maxDepth?: number;
  budgets?: Partial<CrawlBudgets>;
  /** what asks for help, after the command words; default `['--help']` (curl: `['--help', 'all']`) */
  helpArgs?: readonly string[];
  /** `commands` (default) follows subcommands; `options` lists the root page's options, one level (curl) */
  list?: 'commands' | 'options';
  /** what prints the version (its first line is kept); default `['--version']`; `false`: none */
  versionArgs?: readonly string[] | false;
  /** help pages read at once; default 2 */
  concurrency?: number;
  /** the CLI manifest's plain settings (env), as a run would have them */
  env?: Record<string, string>;
  /** isolated profile: extra read-only host paths (a CLI under /opt) */
  readOnlyPaths?: readonly string[];
  /** run in the plain profile where isolation is unavailable (the CLI then has the host's network) */
  allowPlain?: boolean;
}

/** A request a CLI tried while printing help: refused, and recorded against that page. */
export interface NetworkAttempt {
  /** the command words and help arguments, e.g. `pr --help` */
  command: string;
  method: string;
  target: string;
}

export interface CrawlResult {
  tree: HelpTree;
  /** the first line `versionArgs` printed */
  version?: string;
  /** sorted and without duplicates */
  networkAttempts: NetworkAttempt[];
  /** how the crawl went (not part of the tree: durations vary) */
  stats: {
    pages: number;
    outputBytes: number;
    durationMs: number;
    failed: string[];
    profile: 'isolated' | 'plain';
  };
}

interface Page {
  ok: boolean;
  text: string;
  timedOut: boolean;
  truncated: boolean;
}

interface Pending {
  path: string[];
  node: HelpCommand | undefined;
}

/**
 * Crawls a CLI's help into a tree of at most `maxDepth` levels and `budgets.maxCommands`
 * commands. A tree cut at `maxDepth` says `partial: {reason: 'max_depth'}`; one cut by a
 * budget or a page that could not be read says which, and is refused when an extension loads.
 * @throws BrokerError HELP_CRAWL_NOT_ISOLATED (no isolated profile here and `allowPlain` not set),
 *   HELP_CRAWL_FAILED (the root page could not be read), INVALID_TOOL_INPUT (maxDepth outside 1..3)
 */
export async function crawlHelpTree(opts: CrawlOptions): Promise<CrawlResult> {
  const started = Date.now();
  const maxDepth = opts.maxDepth ?? MAX_CRAWL_DEPTH;
  if (!Number.isInteger(maxDepth) || maxDepth < 1 || maxDepth > MAX_CRAWL_DEPTH) {
    throw brokerError(
      'INVALID_TOOL_INPUT',
      { reason: `maxDepth must be 1..${MAX_CRAWL_DEPTH}` },
      { details: { maxDepth } },
    );
  }
  const budgets = { ...DEFAULT_CRAWL_BUDGETS, ...opts.budgets };
  const deadline = started + budgets.timeMs;
  const helpArgs = opts.helpArgs ?? ['--help'];
  const why = await isolationUnavailable();
  if (why && !opts.allowPlain) throw new BrokerError('HELP_CRAWL_NOT_ISOLATED', { details: { reason: why } });
  const profile = why ? 'plain' : 'isolated';

  const attempts: NetworkAttempt[] = [];
  const failed: string[] = [];
  let pages = 0;
  let outputBytes = 0;
  const reasons = new Set<PartialReason>();

  const read = async (args: readonly string[]): Promise<Page> => {
    const left = deadline - Date.now();
    if (left <= 0) return { ok: false, text: '', timedOut: true, truncated: false };
    const proxy = await startRefusingProxy();
    try {
      const r = await runSandboxed({
        entrypoint: opts.entrypoint,
        args,
        image: profile,
        deadlineMs: Math.min(left, budgets.perCallMs),
        // Nothing may be reached, so the CA is empty: a TLS client fails closed on it.
        session: { proxyUrl: proxy.url, caCertPem: '' },
        childEnv: { cli: { env: opts.env ?? {} } },
        ...(opts.readOnlyPaths ? { readOnlyPaths: opts.readOnlyPaths } : {}),
      });
      pages += 1;
      const text = scrub(r.stdout.trim() ? r.stdout : r.stderr);
      outputBytes += Buffer.byteLength(r.stdout) + Buffer.byteLength(r.stderr);
      return { ok: !r.timedOut && text.trim() !== '', text, timedOut: r.timedOut, truncated: r.truncated };
    } finally {
      await proxy.close();
      for (const a of proxy.attempts) attempts.push({ command: args.join(' '), ...a });
    }
  };

  const [root, versionText] = await Promise.all([
    read(helpArgs).catch((e: unknown) => {
      throw new BrokerError('HELP_CRAWL_FAILED', {
        details: { phase: 'spawn', code: (e as BrokerError).code ?? 'unknown' },
        cause: e,
      });
    }),
    opts.versionArgs === false ? undefined : read(opts.versionArgs ?? ['--version']).catch(() => undefined),
  ]);
  if (!root.ok)
    throw new BrokerError('HELP_CRAWL_FAILED', { details: { phase: 'root', timedOut: root.timedOut } });
  const version = versionText?.ok ? versionLine(versionText.text) : undefined;

  let count = 0;
  const attach = (parent: HelpCommand[], entries: readonly HelpEntry[]): HelpCommand[] => {
    const added: HelpCommand[] = [];
    for (const e of entries) {
      if (count >= budgets.maxCommands) {
        reasons.add('command_budget');
        break;
      }
      count += 1;
      const node: HelpCommand = { name: e.name, ...(e.summary ? { summary: e.summary } : {}) };
      if (e.kind) Object.defineProperty(node, KIND, { value: e.kind, enumerable: false });
      parent.push(node);
      added.push(node);
    }
    return added;
  };

  const tree: HelpTree = { commands: [] };
  const rootParsed = opts.list === 'options' ? parseOptions(root.text) : parseHelp(root.text);
  if (rootParsed.summary) tree.summary = rootParsed.summary;
  let level: Pending[] = attach(tree.commands, rootParsed.entries).map((node) => ({
    path: [node.name],
    node,
  }));
  if (root.truncated) reasons.add('output_budget');

  for (let depth = 1; opts.list !== 'options' && level.length > 0 && depth <= maxDepth; depth++) {
    // az says which rows are groups and which are commands: a known leaf needs no page, and
    // a known group at the last level is cut without one.
    const todo = level.filter(
      (p) => kindOf(p.node) !== 'command' && !(depth === maxDepth && kindOf(p.node) === 'group'),
    );
    if (depth === maxDepth && level.some((p) => kindOf(p.node) === 'group')) reasons.add('max_depth');
    const results = await pool(todo, opts.concurrency ?? 2, async (p) => {
      if (stopped()) return undefined;
      const page = await read([...p.path, ...helpArgs]).catch(() => undefined);
      if (!page?.ok) {
        failed.push(p.path.join(' '));
        reasons.add(page?.timedOut ? 'time_budget' : 'help_failed');
        return undefined;
      }
      if (page.truncated) reasons.add('output_budget');
      return page;
    });
    const next: Pending[] = [];
    todo.forEach((p, i) => {
      const page = results[i];
      if (!page || !p.node) return;
      const entries = parseHelp(page.text).entries.map((e) => ({
        ...e,
        name: e.name.startsWith(`${p.node!.name}:`) ? e.name.slice(p.node!.name.length + 1) : e.name,
      }));
      if (entries.length === 0) return;
      if (depth === maxDepth) {
        reasons.add('max_depth');
        return;
      }
      p.node.commands = [];
      for (const child of attach(p.node.commands, entries))
        next.push({ path: [...p.path, child.name], node: child });
    });
    level = next;
  }
  if (Date.now() > deadline && level.length > 0) reasons.add('time_budget');

  const reason = pickReason(reasons);
  if (reason) tree.partial = { reason };
  failed.sort();
  return {
    tree,
    ...(version ? { version } : {}),
    networkAttempts: sortAttempts(attempts),
    stats: { pages, outputBytes, durationMs: Date.now() - started, failed, profile },
  };

  function stopped(): boolean {
    if (Date.now() >= deadline) {
      reasons.add('time_budget');
      return true;
    }
    if (outputBytes > budgets.maxOutputBytes) {
      reasons.add('output_budget');
      return true;
    }
    return false;
  }
}

/**
 * The version from the first line printed, up to the first version number and the
 * parenthesis right after it: `gh version 2.23.0 (2023-02-27 Debian 2.23.0+dfsg1-1)`,
 * `azure-cli 2.45.0`, `curl 7.88.1 (x86_64-pc-linux-gnu)` without the libraries curl lists
 * next (an OpenSSL update changes those, not the help).
 */
export function versionLine(text: string): string | undefined {
  const line = text
    .split('\n')
    .find((l) => l.trim() !== '')
    ?.trim()
    .replace(/\s+/g, ' ');
  if (!line) return undefined;
  const m = /^.*?\d+\.\d+[\w.+~-]*(?: \([^)]*\))?/.exec(line);
  return (m ? m[0] : line).slice(0, 200);
}

const KIND = Symbol('kind');

function kindOf(node: HelpCommand | undefined): HelpEntry['kind'] {
  return node ? ((node as unknown as Record<symbol, HelpEntry['kind']>)[KIND] ?? undefined) : undefined;
}

/** A budget or a failed page outranks `max_depth`: the tree is then refused, whatever else cut it. */
function pickReason(reasons: ReadonlySet<PartialReason>): PartialReason | undefined {
  for (const r of ['time_budget', 'output_budget', 'command_budget', 'help_failed', 'max_depth'] as const)
    if (reasons.has(r)) return r;
  return undefined;
}

function sortAttempts(list: readonly NetworkAttempt[]): NetworkAttempt[] {
  const key = (a: NetworkAttempt) => `${a.command}\0${a.method}\0${a.target}`;
  const unique = new Map(list.map((a) => [key(a), a]));
  return [...unique.keys()].sort().map((k) => unique.get(k)!);
}

/** The call's own directories in a page (az names its config dir) would make two crawls differ. */
function scrub(text: string): string {
  return text.replace(/\/[^\s'"]*?\/clibroker-sbx-[A-Za-z0-9]+\/(home|tmp)/g, (_m, d: string) =>
    d === 'home' ? '~' : '$TMPDIR',
  );
}

/** `fn` over `items` with at most `n` at once; results in the items' order. */
async function pool<T, R>(items: readonly T[], n: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(n, items.length)) }, worker));
  return out;
}
