/**
 * The import structure as a drawing (docs/architecture.md): every import of every src/**\/*.ts
 * file — static, dynamic and type-only — gives an arrow between folders. The arrows must
 * point down the declared layers, never up, never between two folders of one layer, and
 * never round a circle. No file-to-file circle either, anywhere in src (inside the engine:
 * the request corridor runs one way). The parse is the compiler's, so an import in a comment or a
 * string does not count and none is missed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import ts from 'typescript';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

/**
 * Lowest first. A folder may import only from folders in lower rows; folders of one row are
 * independent of each other. Every folder of src must be placed (a new one is drawn in
 * docs/architecture.md and here). Files named with `.ts` are nodes of their own: the
 * catalogue every layer throws from, the package's two front doors and the binary's entry.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['errors.ts'],
  // the byte readers: GraphQL documents, and the engine's HTTP/1.1 heads and chunked bodies
  ['policy/graphql', 'broker/http1'],
  ['policy'],
  ['audit'],
  ['manifest'],
  ['broker'],
  ['credentials'],
  ['sandbox', 'store', 'mockvendor'],
  ['help', 'runs'],
  ['config', 'conformance', 'cli'],
  ['host', 'testing', 'doctor'],
  // the kit both front doors share: bounded bodies, wire errors, start and stop
  ['front', 'demo'],
  ['daemon', 'serve'],
  ['commands'],
  ['index.ts', 'cli/index.ts', 'commands/main.ts'],
];

/** Files that are a node of their own rather than part of their folder's. */
const FILE_NODES = new Set(LAYERS.flat().filter((n) => n.endsWith('.ts')));

/**
 * Folders that never import the engine, not even a type: the published .d.ts of the policy and
 * the manifest must not reach into it, and the sandbox knows only a proxy URL and a CA.
 */
const ENGINE_FREE = ['policy', 'policy/graphql', 'manifest', 'sandbox'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Every module specifier a file names: import/export from, import(), `import('x').T` in types. */
export function specifiers(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier) {
      if (ts.isStringLiteral(n.moduleSpecifier)) out.push(n.moduleSpecifier.text);
    } else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = n.arguments;
      if (arg && ts.isStringLiteralLike(arg)) out.push(arg.text);
      // a computed import() cannot be drawn: it is refused rather than left out
      else out.push(`<computed import() in ${relative(SRC, file)}>`);
    } else if (ts.isImportTypeNode(n)) {
      const lit = ts.isLiteralTypeNode(n.argument) ? n.argument.literal : undefined;
      if (lit && ts.isStringLiteral(lit)) out.push(lit.text);
    } else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference)) {
      const e = n.moduleReference.expression;
      if (ts.isStringLiteral(e)) out.push(e.text);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** The node a file of src belongs to. */
/** Files that belong to another file's node: the catalogue's message templates are the catalogue. */
const PART_OF: Readonly<Record<string, string>> = {
  'error-catalogue.ts': 'errors.ts',
  'error-messages.ts': 'errors.ts',
};

function nodeOf(rel: string): string {
  if (PART_OF[rel]) return PART_OF[rel];
  if (FILE_NODES.has(rel)) return rel;
  const d = dirname(rel);
  return d === '.' ? rel : d;
}

/** One file's import of another, both inside src (paths relative to src, `.ts`). */
interface FileEdge {
  from: string;
  to: string;
}

interface Edge {
  from: string;
  to: string;
  /** one `file -> file` that makes the arrow, for the failure message */
  via: string[];
}

function graph(): { edges: Map<string, Edge>; nodes: Set<string>; outside: string[]; files: FileEdge[] } {
  const edges = new Map<string, Edge>();
  const nodes = new Set<string>();
  const outside: string[] = [];
  const files: FileEdge[] = [];
  for (const file of sourceFiles(SRC)) {
    const rel = relative(SRC, file);
    const from = nodeOf(rel);
    nodes.add(from);
    for (const spec of specifiers(file, readFileSync(file, 'utf8'))) {
      if (spec.startsWith('<computed')) {
        outside.push(spec);
        continue;
      }
      if (!spec.startsWith('.')) continue; // node: builtins and packages
      const target = relative(SRC, resolve(dirname(file), spec)).replace(/\.js$/, '.ts');
      if (target.startsWith('..')) {
        outside.push(`${rel} imports ${spec}, outside src`);
        continue;
      }
      files.push({ from: rel, to: target });
      const to = nodeOf(target);
      if (to === from) continue;
      const key = `${from} -> ${to}`;
      const edge = edges.get(key) ?? { from, to, via: [] };
      edge.via.push(`${rel} -> ${target}`);
      edges.set(key, edge);
    }
  }
  return { edges, nodes, outside, files };
}

/** Every circle a depth-first walk meets, each as `a -> b -> … -> a`. */
export function circlesOf(arrows: readonly { from: string; to: string }[]): string[] {
  const next = new Map<string, string[]>();
  for (const e of arrows) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const circles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const walk = (n: string): void => {
    state.set(n, 'open');
    path.push(n);
    for (const m of next.get(n) ?? []) {
      if (state.get(m) === 'open') circles.push([...path.slice(path.indexOf(m)), m].join(' -> '));
      else if (!state.has(m)) walk(m);
    }
    path.pop();
    state.set(n, 'done');
  };
  for (const n of [...new Set(arrows.flatMap((e) => [e.from, e.to]))].sort()) if (!state.has(n)) walk(n);
  return circles;
}

const { edges, nodes, outside, files } = graph();
const layerOf = new Map(LAYERS.flatMap((row, i) => row.map((n) => [n, i] as const)));
const show = (e: Edge): string => `${e.from} -> ${e.to} (${e.via.slice(0, 3).join(', ')})`;

t.test('the parse sees every kind of import', async (t) => {
  const found = specifiers(
    'x.ts',
    [
      "import a from './a.js';",
      "import type { B } from './b.js';",
      "export { c } from './c.js';",
      "export * from './d.js';",
      "import './e.js';",
      "const f = await import('./f.js');",
      "type G = import('./g.js').G;",
      "// import h from './h.js';",
      'const s = "from \'./i.js\'";',
    ].join('\n'),
  );
  t.same(found, ['./a.js', './b.js', './c.js', './d.js', './e.js', './f.js', './g.js']);
  t.ok(edges.size > 50, `the graph has arrows (${edges.size})`);
});

t.test('every import resolves inside src, by a literal path', async (t) => {
  t.same(outside, []);
});

t.test('every folder of src has a place in the layers', async (t) => {
  const unplaced = [...nodes].filter((n) => !layerOf.has(n)).sort();
  t.same(unplaced, [], 'add new folders to LAYERS and to the drawing in docs/architecture.md');
  const gone = [...layerOf.keys()].filter((n) => !nodes.has(n)).sort();
  t.same(gone, [], 'LAYERS names only folders that exist');
});

t.test('no arrow goes up a layer or across one', async (t) => {
  const bad = [...edges.values()]
    .filter((e) => (layerOf.get(e.to) ?? -1) >= (layerOf.get(e.from) ?? Number.POSITIVE_INFINITY))
    .map(show)
    .sort();
  t.same(bad, []);
});

t.test('no two folders import each other, directly or round a circle', async (t) => {
  t.same(circlesOf([...edges.values()]), []);
});

t.test('the circle finder finds circles', async (t) => {
  const arrows = (s: string) => s.split(' ').map((a) => ({ from: a[0]!, to: a[1]! }));
  t.same(circlesOf(arrows('ab bc cd')), [], 'a line is no circle');
  t.same(circlesOf(arrows('ab bc ca')), ['a -> b -> c -> a']);
  t.same(circlesOf(arrows('ab ba cd')), ['a -> b -> a'], 'two files importing each other');
});

/** The engine's parsers: bytes in, a head or a refusal out; they import nothing else of the engine. */
const PARSER_FOLDERS = ['broker/http1'];

t.test('the parsers import nothing of the engine but each other', async (t) => {
  const inFolder = (f: string, dir: string): boolean => f.startsWith(`${dir}/`);
  for (const dir of PARSER_FOLDERS) {
    const mine = files.filter((e) => inFolder(e.from, dir));
    t.ok(mine.length > 0, `${dir} has files that import (${mine.length})`);
    const out = mine
      .filter((e) => e.to.startsWith('broker/') && !inFolder(e.to, dir))
      .map((e) => `${e.from} -> ${e.to}`);
    t.same(out, [], `${dir}: a parser takes its limits as options instead of importing them`);
  }
});

t.test('no file of the engine imports another round a circle, type-only imports included', async (t) => {
  const inEngine = (f: string): boolean => f.startsWith('broker/');
  const engine = files.filter((e) => inEngine(e.from) && inEngine(e.to));
  t.ok(engine.length > 40, `the engine's files import each other (${engine.length})`);
  t.same(circlesOf(engine), [], 'tunnel → reader → pipeline runs one way: hand a handler down instead');
});

t.test('no file of src imports another round a circle, type-only imports included', async (t) => {
  t.ok(files.length > 500, `the files of src import each other (${files.length})`);
  t.same(
    circlesOf(files),
    [],
    'a file that needs a part of one that imports it takes that part from a file of its own',
  );
});

t.test('policy, manifest and sandbox never import the engine, not even a type', async (t) => {
  const bad = [...edges.values()]
    .filter((e) => ENGINE_FREE.includes(e.from) && (e.to === 'broker' || e.to.startsWith('broker/')))
    .map(show);
  t.same(bad, []);
});

/** The rows and arrows of the drawing in docs/architecture.md, read back. */
function drawing(): { rows: string[][]; uses: Map<string, string[]> } {
  const doc = readFileSync(resolve(SRC, '../docs/architecture.md'), 'utf8');
  const block = /## The drawing[\s\S]*?```\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
  const rows: string[][] = [];
  const uses = new Map<string, string[]>();
  for (const line of block.split('\n')) {
    const m = /^\s*(\d+)?\s+(.*)$/.exec(line);
    if (!m || m[2]!.trim() === '│') continue;
    if (m[1] !== undefined) rows.unshift([]);
    const [left = '', right] = m[2]!.replace(/\(.*?\)/g, '').split('▶');
    const names = left.replace(/─/g, ' ').trim().split(/\s+/);
    rows[0]!.push(...names);
    if (right === undefined) for (const n of names) uses.set(n, []);
    else if (right.trim() !== '') uses.set(names[0]!, right.trim().split(/\s+/));
  }
  return { rows, uses };
}

t.test('docs/architecture.md draws these layers and these arrows', async (t) => {
  const { rows, uses } = drawing();
  t.same(rows, LAYERS, 'the rows of the drawing are LAYERS');
  for (const [from, drawn] of uses) {
    const real = [...edges.values()].filter((e) => e.from === from && e.to !== 'errors.ts').map((e) => e.to);
    t.same([...drawn].sort(), real.sort(), `${from}: the arrows drawn are the imports`);
  }
  t.ok(uses.size >= 20, `the drawing lists what each folder uses (${uses.size})`);
});
