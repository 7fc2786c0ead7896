/**
 * Per-CLI rules that need no extension context: bootstrap preamble, wire-policy
 * overrides, the help tree's shape and size.
 */
import { secretKind } from '../audit/secret-shape.js';
import { type PathSeg, type ProblemList, is } from './problems.js';

export const MAX_PREAMBLE_ARGS = 32;
export const MAX_OVERRIDES = 256;
export const MAX_HELP_COMMANDS = 512;
export const DEFAULT_HELP_MAX_DEPTH = 3;
/** The placeholders a preamble may use; credentials/preamble.ts substitutes them. */
export const PREAMBLE_PLACEHOLDERS = ['clientId', 'tenantId', 'dummy'] as const;

// The preamble is run as an argv array, never through a shell; an argument that needs one of
// these is a sign someone expected a shell (or is smuggling one in). Braces are handled
// separately because `{clientId}` is legitimate.
const SHELL_META_RE = /[;&|<>`$()\\"'*?[\]#~!\s\0]/;
const PLACEHOLDER_RE = /\{([^{}]*)\}/g;

export function checkPreamble(preamble: unknown, at: readonly PathSeg[], out: ProblemList): void {
  if (!is.arr(preamble)) return;
  const path = [...at, 'bootstrap', 'preamble'];
  if (preamble.length < 1 || preamble.length > MAX_PREAMBLE_ARGS) {
    out.add(
      'MANIFEST_PREAMBLE_LENGTH',
      path,
      `1 to ${MAX_PREAMBLE_ARGS} arguments`,
      `${preamble.length} arguments`,
    );
  }
  preamble.forEach((arg, i) => {
    if (!is.str(arg)) return;
    const p = [...path, i];
    const unknown = [...arg.matchAll(PLACEHOLDER_RE)]
      .map((m) => m[1]!)
      .filter((n) => !(PREAMBLE_PLACEHOLDERS as readonly string[]).includes(n));
    if (unknown.length > 0) {
      out.add(
        'MANIFEST_PREAMBLE_PLACEHOLDER_UNKNOWN',
        p,
        'only the placeholders {clientId}, {tenantId}, {dummy}',
        arg,
      );
    }
    const bare = arg.replace(PLACEHOLDER_RE, '');
    if (SHELL_META_RE.test(bare) || /[{}]/.test(bare)) {
      out.add(
        'MANIFEST_PREAMBLE_SHELL_METACHARACTER',
        p,
        'an argument without shell metacharacters or whitespace (the preamble runs without a shell)',
        arg,
      );
    }
    const kind = secretKind(arg);
    if (kind)
      out.add(
        'MANIFEST_PREAMBLE_SECRET',
        p,
        `a non-secret argument (this one looks like a ${kind}); use {dummy} for a client secret`,
        arg,
      );
  });
}

export function checkOverrides(wirePolicy: unknown, at: readonly PathSeg[], out: ProblemList): void {
  if (!is.obj(wirePolicy) || !is.arr(wirePolicy.overrides)) return;
  const path = [...at, 'wirePolicy', 'overrides'];
  const list = wirePolicy.overrides;
  if (list.length > MAX_OVERRIDES)
    out.add(
      'MANIFEST_OVERRIDES_TOO_MANY',
      path,
      `at most ${MAX_OVERRIDES} overrides`,
      `${list.length} overrides`,
    );
  list.forEach((o, i) => {
    if (!is.obj(o) || !is.obj(o.match)) return;
    const m = o.match;
    if (m.method === undefined && m.pathPattern === undefined && m.graphqlOperation === undefined) {
      out.add(
        'MANIFEST_OVERRIDE_UNCONSTRAINED',
        [...path, i, 'match'],
        'at least one of method, pathPattern, graphqlOperation',
        m,
      );
    }
  });
}

const MAX_SHAPE_PROBLEMS = 20;

/**
 * The help tree's shape, partial reason, depth against `maxDepth` and command count. The walk
 * is iterative and bounded, so a hostile JSON tree can neither blow the stack nor run long.
 */
export function checkHelpTree(
  tree: unknown,
  maxDepth: number,
  at: readonly PathSeg[],
  out: ProblemList,
): void {
  if (tree === undefined) return;
  const path = [...at, 'helpTree'];
  if (!is.obj(tree) || !is.arr(tree.commands)) {
    out.add('MANIFEST_FIELD_INVALID', path, 'an object {summary?, partial?, commands: [...]}', tree);
    return;
  }
  if (tree.summary !== undefined && !is.str(tree.summary))
    out.add('MANIFEST_FIELD_INVALID', [...path, 'summary'], 'a string', tree.summary);
  if (tree.partial !== undefined) {
    const reason = is.obj(tree.partial) ? tree.partial.reason : undefined;
    if (reason !== 'max_depth') {
      out.add(
        'MANIFEST_HELP_TREE_PARTIAL',
        [...path, 'partial', 'reason'],
        'no partial tree, or one cut at maxDepth (reason "max_depth")',
        reason ?? tree.partial,
      );
    }
  }
  let count = 0;
  let shapeProblems = 0;
  let tooDeep = false;
  const stack: { node: unknown; depth: number; path: PathSeg[] }[] = [];
  tree.commands.forEach((c, i) => {
    stack.push({ node: c, depth: 1, path: [...path, 'commands', i] });
  });
  while (stack.length > 0) {
    const { node, depth, path: p } = stack.pop()!;
    count += 1;
    if (count > MAX_HELP_COMMANDS) {
      out.add(
        'MANIFEST_HELP_TREE_TOO_MANY_COMMANDS',
        [...path, 'commands'],
        `at most ${MAX_HELP_COMMANDS} commands`,
        `more than ${MAX_HELP_COMMANDS}`,
      );
      return;
    }
    if (depth > maxDepth && !tooDeep) {
      tooDeep = true;
      out.add(
        'MANIFEST_HELP_TREE_TOO_DEEP',
        p,
        `a tree at most helpCrawl.maxDepth (${maxDepth}) levels deep`,
        `depth ${depth}`,
      );
    }
    const ok =
      is.obj(node) &&
      is.str(node.name) &&
      node.name.length > 0 &&
      (node.summary === undefined || is.str(node.summary));
    const kids = is.obj(node) ? node.commands : undefined;
    if (!ok || (kids !== undefined && !is.arr(kids))) {
      if (shapeProblems++ < MAX_SHAPE_PROBLEMS)
        out.add('MANIFEST_FIELD_INVALID', p, 'a command {name, summary?, commands?: [...]}', node);
      continue;
    }
    if (is.arr(kids))
      kids.forEach((c, i) => {
        stack.push({ node: c, depth: depth + 1, path: [...p, 'commands', i] });
      });
  }
}
