import t from 'tap';
import { damerauLevenshtein, plain, suggest } from '../../src/cli/suggest.js';

const distances: [string, string, number][] = [
  ['', '', 0],
  ['abc', '', 3],
  ['vendor', 'vendr', 1],
  ['event', 'evnet', 1], // a transposition counts 1 (plain Levenshtein says 2)
  ['classify', 'clasify', 1],
  ['list', 'ls', 2],
  ['abc', 'xyz', 3],
  ['ca', 'abc', 3], // optimal string alignment, not unrestricted Damerau
];

t.test('Damerau–Levenshtein (optimal string alignment)', async (t) => {
  t.plan(distances.length * 2);
  for (const [a, b, d] of distances) {
    t.equal(damerauLevenshtein(a, b), d, `${a} ~ ${b}`);
    t.equal(damerauLevenshtein(b, a), d, `${b} ~ ${a} (symmetric)`);
  }
});

// input → expected suggestion (undefined: none) over the candidates below
const cands = [
  ...plain(['list', 'show', 'approve', 'reject', 'comments']),
  { name: 'comment', canonical: 'comments' },
];
const cases: Record<string, string | undefined> = {
  lst: 'list', // 1/4
  ls: undefined, // 2/4 = 0.5 > 0.4
  shwo: 'show', // transposition
  aprove: 'approve',
  rejcet: 'reject',
  comemnt: 'comments', // closest is the alias; the canonical name is suggested
  COMMENTS: 'comments', // case-insensitive
  xyz: undefined,
  approvexx: 'approve', // 2/9
  approvexxx: undefined, // distance 3
};

t.test('suggestions obey distance ≤ 2 and ratio ≤ 0.4, and name the canonical form', async (t) => {
  t.plan(Object.keys(cases).length);
  for (const [input, want] of Object.entries(cases)) t.equal(suggest(input, cands), want, input);
});
