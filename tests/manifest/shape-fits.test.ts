/**
 * The manifest's fast shape check (src/manifest/shape-fits.ts) against the zod schema it
 * stands in for: every value the fast check accepts must be accepted by zod — among the
 * fixtures and every single-point mutation of them (each field removed, replaced by values
 * of every kind, and an unknown key added at every object). The well-formed fixtures must
 * pass the fast check, or it would never save anything.
 */
import t from 'tap';
import { knownConformance } from '../../src/conformance/known.js';
import { parseExtensionManifest } from '../../src/manifest/index.js';
import { manifestSchemas } from '../../src/manifest/schema.js';
import { cliShapeFits, extensionShapeFits } from '../../src/manifest/shape-fits.js';
import { atlassianExtension, azExtension, ghExtension } from './fixtures.js';

type Path = (string | number)[];

const REPLACEMENTS: unknown[] = [
  undefined,
  null,
  '',
  'x',
  'gh',
  'UPPER',
  'a b',
  '/p',
  'p',
  'credential.tokenUrl',
  'auth.default',
  'read',
  'token',
  '\0',
  0,
  1,
  1.5,
  3,
  4,
  -1,
  Number.NaN,
  true,
  [],
  [''],
  ['a'],
  [1],
  [null],
  {},
  { x: 1 },
  Object.create(null),
  new Date(0),
  // biome-ignore lint/suspicious/noSparseArray: a hole is one of the shapes under test
  [, 'a'],
];

function at(root: unknown, path: Path): unknown {
  let v = root;
  for (const p of path) v = (v as Record<string | number, unknown>)[p];
  return v;
}

/** Every path to a value inside `v` (objects and arrays, depth first). */
function paths(v: unknown, prefix: Path = []): Path[] {
  const out: Path[] = [prefix];
  if (typeof v === 'object' && v !== null)
    for (const [k, x] of Object.entries(v))
      out.push(...paths(x, [...prefix, Array.isArray(v) ? Number(k) : k]));
  return out;
}

/** `root` with the value at `path` replaced (or deleted, for the DELETE marker). */
const DELETE = Symbol('delete');
function mutate(root: unknown, path: Path, value: unknown): unknown {
  const copy = structuredClone(root);
  if (path.length === 0) return value;
  const parent = at(copy, path.slice(0, -1)) as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (value === DELETE) {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else parent[last] = value;
  return copy;
}

function* mutations(root: unknown): Generator<unknown> {
  for (const p of paths(root)) {
    yield mutate(root, p, DELETE);
    for (const r of REPLACEMENTS) yield mutate(root, p, r);
    const v = at(root, p);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) yield mutate(root, [...p, 'extra'], 1);
    // the value's own neighbours: a real value moved one field over
    if (typeof v === 'string') {
      yield mutate(root, p, `${v} `);
      yield mutate(root, p, v.toUpperCase());
    }
  }
  // a getter, a symbol key and a class instance at the root
  yield Object.defineProperty(structuredClone(root) as object, 'id', { get: () => 'x', enumerable: true });
  yield Object.assign(structuredClone(root) as object, { [Symbol('s')]: 1 });
  yield Object.setPrototypeOf(structuredClone(root) as object, { inherited: 1 });
}

const EXTENSIONS = {
  github: ghExtension(),
  azure: azExtension(),
  atlassian: atlassianExtension(),
  conformance: structuredClone(knownConformance('az')!.extension),
};

t.test('the fixtures pass the fast check, so the fast path is taken', async (t) => {
  for (const [name, ext] of Object.entries(EXTENSIONS)) {
    t.ok(extensionShapeFits(ext), `${name}: the extension`);
    for (const cli of ext.clis) t.ok(cliShapeFits(cli), `${name}: cli ${cli.id}`);
  }
});

t.test('whatever the fast check accepts, zod accepts', async (t) => {
  const { cliSchema, extensionSchema } = manifestSchemas();
  let checked = 0;
  let fast = 0;
  const wrong: string[] = [];
  for (const [name, ext] of Object.entries(EXTENSIONS)) {
    for (const m of mutations(ext)) {
      checked++;
      if (extensionShapeFits(m)) {
        fast++;
        if (!extensionSchema.safeParse(m).success) wrong.push(`${name}: ${JSON.stringify(m).slice(0, 300)}`);
      }
    }
    for (const cli of ext.clis)
      for (const m of mutations(cli)) {
        checked++;
        if (cliShapeFits(m)) {
          fast++;
          if (!cliSchema.safeParse(m).success)
            wrong.push(`${name}/${cli.id}: ${JSON.stringify(m).slice(0, 300)}`);
        }
      }
  }
  t.same(wrong, [], `${checked} values, ${fast} taken by the fast path`);
  t.ok(checked > 1000 && fast > 100, 'enough of both kinds to mean something');
});

t.test('a manifest judged by the fast path reports what the zod path reports', async (t) => {
  // every problem is still found: the rules run on both paths, and a shape the fast check
  // doubts goes to zod, whose problems are the same as before it existed
  for (const [name, ext] of Object.entries(EXTENSIONS)) {
    t.doesNotThrow(() => parseExtensionManifest(ext), `${name} is valid`);
    const bad = mutate(ext, ['clis', 0, 'binary', 'entrypoint'], 'has space');
    t.throws(() => parseExtensionManifest(bad), { code: 'MANIFEST_INVALID' }, `${name}: a bad entrypoint`);
  }
});
