/**
 * Micro-bench for help answered from a committed tree (src/help): `answerHelpFromTree` on
 * the gh tree for a root page, a group, a third-level group and a leaf (which answers
 * undefined, so the host runs the CLI), `describeCli` for the `<id>_cli` description, and
 * reading a committed tree from disk. The goal is ≤ 5 ms per answered call, with no process.
 * Run: `npx tsx bench/micro/help-tree.ts`.
 */
import { answerHelpFromTree, committedHelpTree, describeCli } from '../../src/help/index.js';
import { fmtNs, table, timeNs } from './timing.js';

const gh = committedHelpTree('gh')!.tree;
const az = committedHelpTree('az')!.tree;

const cases: Record<string, () => unknown> = {
  'gh --help (root, 21 commands)': () => answerHelpFromTree(gh, ['--help'], 'gh'),
  'gh pr --help (16 commands)': () => answerHelpFromTree(gh, ['pr', '--help'], 'gh'),
  'gh help codespace ports': () => answerHelpFromTree(gh, ['help', 'codespace', 'ports'], 'gh'),
  'gh pr list --help (leaf: undefined)': () => answerHelpFromTree(gh, ['pr', 'list', '--help'], 'gh'),
  'az --help (root, 104 commands, partial)': () => answerHelpFromTree(az, ['--help'], 'az'),
  "describeCli('gh', 1500 chars)": () => describeCli('gh', gh, 1500),
  "describeCli('az', 1500 chars, cut)": () => describeCli('az', az, 1500),
  'committedHelpTree(gh) (read + JSON.parse)': () => committedHelpTree('gh'),
};

table(Object.entries(cases).map(([name, fn]) => ({ case: name, 'per call': fmtNs(timeNs(fn, 200, 21)) })));
