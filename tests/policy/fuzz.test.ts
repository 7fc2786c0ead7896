/**
 * Property tests over random and mutated inputs (seeded, so a failure reproduces):
 * classify never throws, never classifies below the method table except a parsed GraphQL
 * POST, never below write for a GraphQL POST it could not parse, and wherever graphql-js
 * parses a document the scan either agrees with it on every operation or refuses it.
 */
import { type DocumentNode, Kind, parse, type SelectionSetNode } from 'graphql';
import t from 'tap';
import { FUZZ_SEED, rng } from '../helpers/rng.js';
import { classify, classRank, methodClass, scanDocument } from '../../src/policy/index.js';
import {
  GH_ADD_STAR,
  GH_ISSUE_CREATE,
  GH_ISSUE_FIELDS,
  GH_ISSUE_LIST,
  GH_RELEASE_BY_TAG,
  GH_REPOSITORY_INFO,
} from './fixtures/index.js';

const rand = rng(FUZZ_SEED);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

const SEEDS = [
  GH_ISSUE_LIST,
  GH_REPOSITORY_INFO,
  GH_RELEASE_BY_TAG,
  GH_ISSUE_CREATE,
  GH_ADD_STAR,
  GH_ISSUE_FIELDS,
  'query Q1 { a } mutation M1 { b }',
  '{ a(s: "x\\"y", t: """z\\"""w""") ...F } fragment F on Query { b ... on Query { c } }',
  '# c\nsubscription S { s @skip(if: true) { x } }',
];
const BITS = [
  '{',
  '}',
  '(',
  ')',
  '[',
  ']',
  '"',
  '"""',
  '\\',
  '#',
  '\n',
  '\r',
  ':',
  '...',
  '@',
  '$',
  '!',
  ',',
  ' ',
  'mutation ',
  'query ',
  'fragment F on Q ',
  'on ',
  'x',
  '1',
  '-',
  '.',
  '\u00e9',
  '\t',
];

function mutate(s: string): string {
  let out = s;
  const n = 1 + Math.floor(rand() * 4);
  for (let k = 0; k < n; k++) {
    const i = Math.floor(rand() * (out.length + 1));
    const op = rand();
    if (op < 0.35) out = out.slice(0, i) + pick(BITS) + out.slice(i);
    else if (op < 0.7) out = out.slice(0, i) + out.slice(i + 1 + Math.floor(rand() * 3));
    else if (op < 0.85)
      out = out.slice(0, i) + out.slice(Math.floor(rand() * out.length)).slice(0, 20) + out.slice(i);
    else out = out.slice(0, i);
  }
  return out;
}

/** The operations graphql-js sees: type, name and root fields with fragments resolved. */
function reference(doc: DocumentNode): { type: string; name: string | undefined; rootFields: string[] }[] {
  const frags = new Map<string, SelectionSetNode>();
  for (const d of doc.definitions)
    if (d.kind === Kind.FRAGMENT_DEFINITION) frags.set(d.name.value, d.selectionSet);
  const fields = (set: SelectionSetNode, out: Set<string>, seen: Set<string>): void => {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) out.add(s.name.value);
      else if (s.kind === Kind.INLINE_FRAGMENT) fields(s.selectionSet, out, seen);
      else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        const f = frags.get(s.name.value);
        if (f === undefined) throw new Error('unknown fragment');
        fields(f, out, seen);
      }
    }
  };
  const ops = [];
  for (const d of doc.definitions) {
    if (d.kind !== Kind.OPERATION_DEFINITION) continue;
    const out = new Set<string>();
    fields(d.selectionSet, out, new Set());
    ops.push({ type: d.operation, name: d.name?.value, rootFields: [...out].sort() });
  }
  return ops;
}

t.test('the scan agrees with graphql-js wherever both accept a document', async (t) => {
  let both = 0;
  let refused = 0;
  let disagreements = 0;
  for (let i = 0; i < 5000; i++) {
    const doc = mutate(pick(SEEDS));
    let ref: ReturnType<typeof reference> | undefined;
    try {
      const ast = parse(doc);
      if (
        ast.definitions.every(
          (d) => d.kind === Kind.OPERATION_DEFINITION || d.kind === Kind.FRAGMENT_DEFINITION,
        )
      )
        ref = reference(ast);
    } catch {
      ref = undefined;
    }
    const mine = scanDocument(doc);
    if (ref === undefined || ref.length === 0) continue;
    if (!mine.ok) {
      refused++;
      continue;
    }
    both++;
    const got = mine.operations.map((o) => ({ ...o, rootFields: [...o.rootFields].sort() }));
    if (JSON.stringify(got) !== JSON.stringify(ref)) {
      disagreements++;
      t.fail('disagreement', { doc, got, ref, seed: FUZZ_SEED });
    }
  }
  t.equal(
    disagreements,
    0,
    `agree on ${both} documents both accept (scan refused ${refused} that graphql-js accepts)`,
  );
  t.ok(both > 300, 'enough mutated documents stay valid to mean something');
});

const METHODS = ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE', 'get', 'post', 'PROPFIND', ''];
const PATHS = [
  '/graphql',
  '/api/graphql',
  '/graphql/',
  '/GraphQL',
  '/repos/a/b',
  '/x/../graphql',
  '/graphql%2F',
  '//graphql',
  '',
  '*',
  '/graphql;a',
  '/%67raphql',
];
const QUERIES = [
  '',
  '?query=mutation%7Ba%7D',
  '?query=%7Ba%7D',
  '?query=%7Ba%7D&query=x',
  '?operationName=M',
  '?extensions=%7B%7D',
  '?query=%',
  '?query=query+%7B+a+%7D#frag',
];
const CTYPES = [
  undefined,
  'application/json',
  'application/json; charset=utf-8',
  'application/graphql',
  'text/plain',
  'application/json; charset=latin1',
];

function randomBody(): Buffer | undefined {
  const r = rand();
  if (r < 0.1) return undefined;
  if (r < 0.2)
    return Buffer.from(Array.from({ length: Math.floor(rand() * 64) }, () => Math.floor(rand() * 256)));
  const doc = mutate(pick(SEEDS));
  const json =
    rand() < 0.3
      ? JSON.stringify([{ query: doc }, { query: pick(SEEDS), operationName: pick(['M1', 'Q1', null, 3]) }])
      : JSON.stringify({ query: doc, operationName: pick([undefined, 'M1', 'IssueList', null]) });
  return Buffer.from(rand() < 0.5 ? json : mutate(json));
}

t.test('classify: never throws, never below the method table, never below write when unparsed', async (t) => {
  let checked = 0;
  let failures = 0;
  for (let i = 0; i < 4000; i++) {
    const method = pick(METHODS);
    const target = pick(PATHS) + (rand() < 0.3 ? mutate(pick(QUERIES)) : pick(QUERIES));
    const ct = pick(CTYPES);
    const headers: Record<string, string> = ct === undefined ? {} : { 'content-type': ct };
    const input = { method, target, headers, body: randomBody() };
    let c: ReturnType<typeof classify>;
    try {
      c = classify(input);
    } catch (e) {
      failures++;
      t.fail('classify threw', {
        input: { ...input, body: input.body?.toString('latin1') },
        error: String(e),
      });
      continue;
    }
    checked++;
    const gqlPost = method === 'POST' && c.graphql !== undefined;
    if (!gqlPost && classRank(c.class) < classRank(methodClass(method).class)) {
      failures++;
      t.fail('below the method table', { method, target, got: c.class });
    }
    if (gqlPost && c.graphql?.parsed === false && classRank(c.class) < classRank('write')) {
      failures++;
      t.fail('unparsed GraphQL POST below write', { target, got: c.class });
    }
  }
  t.equal(failures, 0, `${checked} random requests, seed ${FUZZ_SEED}`);
});
