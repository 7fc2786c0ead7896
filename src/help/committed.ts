/**
 * The trees that ship in the package (`help-trees/<cli>.json`), read from the package's own
 * directory: the same from src/, dist/ and the bundled CLI.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HelpTreeDocument } from './document.js';

/** The CLIs whose trees are committed. */
export const COMMITTED_TREES = ['gh', 'az', 'curl'] as const;

let dir: string | undefined;

/** `help-trees/` of this package: the nearest one above this module. */
export function helpTreesDir(): string {
  if (dir) return dir;
  let at = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(at, 'help-trees');
    if (existsSync(join(candidate, 'gh.json'))) {
      dir = candidate;
      return dir;
    }
    at = dirname(at);
  }
  throw new Error('help-trees/ was not found above this module (the package is incomplete)');
}

/** The committed document for `cli`, or undefined when none ships. */
export function committedHelpTree(cli: string): HelpTreeDocument | undefined {
  if (!(COMMITTED_TREES as readonly string[]).includes(cli)) return undefined;
  return JSON.parse(readFileSync(join(helpTreesDir(), `${cli}.json`), 'utf8')) as HelpTreeDocument;
}

/**
 * The tree a configured CLI is described and helped from: the manifest's own, else the one the
 * package ships for the pinned program (matched by its file name: gh, az, curl).
 */
export function helpTreeFor(
  declared: HelpTreeDocument['tree'] | undefined,
  executable: string,
): HelpTreeDocument['tree'] | undefined {
  if (declared) return declared;
  try {
    return committedHelpTree(executable.slice(executable.lastIndexOf('/') + 1))?.tree;
  } catch {
    return undefined; // an incomplete package: described and helped without a tree, never refused for it
  }
}
