/**
 * The docs stand alone: what ships and what contributors read (docs, README, CHANGELOG,
 * SECURITY, examples, and the comments of src, tests, bench and scripts) cites only the
 * repository's own files. No design document, ticket number or local path that a reader of the
 * repository does not have; a rule that matters is stated in our own words instead.
 * Section signs are fine after a public standard (RFC 9110 §9.1, GraphQL spec §2.1).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import t from 'tap';

const root = resolve(import.meta.dirname, '../..');
const self = relative(root, import.meta.filename);

const FORBIDDEN: [string, RegExp][] = [
  ['a design document outside the repository', /\bDESIGN\.md\b/],
  ['a path on a development machine', /\/work\/(?:shared|main|wt)\b|\breal-clis\b/],
  ['a ticket number', /\bissues?\s*#\s*\d+|\bissue\s+\d+\b/i],
  ['a ticket as the authority', /\b(?:the|this|that|runs|per the|from the|in the) issue\b/i],
  ['a section of a specification', /\bspec(?:ification)? section\b/i],
];
const STANDARD = /\b(?:RFC \d+|GraphQL spec(?:'s)?)\b/;

function walk(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'results') walk(p, out);
    } else if (/\.(?:ts|mjs|js|md|sh)$/.test(e.name)) out.push(p);
  }
  return out;
}

const files = [
  'README.md',
  'CHANGELOG.md',
  'SECURITY.md',
  ...['docs', 'examples', 'src', 'tests', 'bench', 'scripts', 'bin'].flatMap((d) => walk(d)),
].filter((f) => f !== self);

t.test('no file cites what is not in the repository', async (t) => {
  t.ok(files.length > 100, `${files.length} files scanned`);
  const found: string[] = [];
  for (const f of files) {
    readFileSync(join(root, f), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        for (const [what, re] of FORBIDDEN)
          if (re.test(line)) found.push(`${f}:${i + 1}: ${what}: ${line.trim()}`);
        if (line.includes('§') && !STANDARD.test(line))
          found.push(`${f}:${i + 1}: a section sign without the public standard it cites: ${line.trim()}`);
      });
  }
  t.same(found, [], 'every citation names a file of the repository or a public standard');
});

t.test('the checks catch what they are for', async (t) => {
  const hits = (line: string) =>
    FORBIDDEN.some(([, re]) => re.test(line)) || (line.includes('§') && !STANDARD.test(line));
  for (const bad of [
    'see DESIGN.md for the rule',
    'as /work/shared/notes says',
    'fixed in issue #12',
    'the limits from the issue',
    'per spec section 4',
    'the grammar (§2.2)',
  ])
    t.ok(hits(bad), `caught: ${bad}`);
  for (const good of [
    'RFC 9110 §9.1',
    'the GraphQL spec §2.1',
    'gh issue list',
    'POST /repos/o/r/issues/1/lock',
  ])
    t.notOk(hits(good), `allowed: ${good}`);
});
