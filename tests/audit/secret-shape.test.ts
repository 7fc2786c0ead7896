/**
 * The secret-shape detector runs on every log line, envelope and audit path, so it must be
 * linear in its input: a regex that restarts a failing scan at every candidate position turns
 * a 1 MiB argument into minutes of CPU (and a hung CLI or broker). Each hostile text below is
 * 1 MiB of one repeated atom that used to make some rule backtrack; a quadratic rule takes
 * minutes on it, the test's timeout (far above the milliseconds a linear scan needs) fails it.
 */
import t from 'tap';
import { looksLikeSecret, REDACTED, redactSecrets, secretKind } from '../../src/audit/secret-shape.js';

const MiB = 1 << 20;
const atoms = [
  'a',
  'eyJ',
  'eyJ-',
  '--eyJ',
  'eyJa.',
  'eyJaaaa.eyJ-',
  'eyJabcd.eyJ',
  'http://',
  'x://a:',
  'a:b@',
  'ghp_',
  'github_pat_',
  'xoxb-',
  'AKIA',
  'sk-',
  'glpat-',
  '-----BEGIN ',
  '-----END A-----',
  'aB3',
  'Ab1+/',
  'a.b.',
];

t.test('linear on 1 MiB of any repeated atom', { timeout: 60_000 }, async (t) => {
  t.plan(atoms.length);
  for (const atom of atoms) {
    const text = atom.repeat(Math.ceil(MiB / atom.length));
    redactSecrets(text);
    looksLikeSecret(`${text}!`);
    t.pass(`${JSON.stringify(atom)} × ${text.length}`);
  }
});

const found: Record<string, [string, string]> = {
  'JWT after a space': ['Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln', 'jwt'],
  'JWT after =': ['token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln', 'jwt'],
  'JWT in quotes': ['"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln"', 'jwt'],
  'URL credentials at the start': ['https://user:pa55word@example.com/x', 'url-credentials'],
  'URL credentials after a space': ['clone https://user:pa55word@example.com/x', 'url-credentials'],
  'JWT after a flag dash': ['--eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln', 'jwt'],
  'JWT inside a token run': ['x-eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln', 'jwt'],
  'URL credentials after a flag dash': ['--https://alice:s3cr3t-pass@example.com/x', 'url-credentials'],
  'URL credentials in parentheses': ['(git+ssh://user:pa55word@example.com)', 'url-credentials'],
};

t.test('the anchored rules still find secrets where they occur in practice', async (t) => {
  t.plan(Object.keys(found).length * 2);
  for (const [name, [text, kind]] of Object.entries(found)) {
    t.equal(secretKind(text), kind, name);
    t.ok(redactSecrets(text).includes(REDACTED), `${name}: redacted`);
  }
});
