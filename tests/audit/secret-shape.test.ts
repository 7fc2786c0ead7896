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
/**
 * Each atom, and the rule its repetition trips when the run itself is secret-shaped (a JWT of
 * repeated parts, a token prefix followed by its own tail); undefined: nothing is secret in it,
 * so the text comes back unchanged.
 */
const atoms: [string, string | undefined][] = [
  ['a', undefined],
  ['eyJ', undefined],
  ['eyJ-', undefined],
  ['--eyJ', undefined],
  ['eyJa.', undefined],
  ['eyJaaaa.eyJ-', 'jwt'],
  ['eyJabcd.eyJ', 'jwt'],
  ['http://', undefined],
  ['x://a:', undefined],
  ['a:b@', undefined],
  ['ghp_', undefined],
  ['github_pat_', 'github-token'],
  ['xoxb-', 'slack-token'],
  ['AKIA', undefined],
  ['sk-', 'sk-key'],
  ['glpat-', 'gitlab-token'],
  ['-----BEGIN ', undefined],
  ['-----END A-----', undefined],
  ['aB3', undefined],
  ['Ab1+/', undefined],
  ['a.b.', undefined],
];

// Linearity is held by the timeout (a quadratic rule takes minutes on one of these texts); the
// assertions hold what the scans answer on them, one assertion per property, listing the atoms
// that break it.
t.test('linear on 1 MiB of any repeated atom, and right about it', { timeout: 60_000 }, async (t) => {
  const verdicts: string[] = [];
  const redactions: string[] = [];
  for (const [atom, kind] of atoms) {
    const text = atom.repeat(Math.ceil(MiB / atom.length));
    const redacted = redactSecrets(text);
    const secret = looksLikeSecret(`${text}!`);
    const name = `${JSON.stringify(atom)} × ${text.length}`;
    if (secret !== (kind !== undefined)) verdicts.push(`${name}: looksLikeSecret ${secret}`);
    if (
      kind === undefined ? redacted !== text : !redacted.includes(REDACTED) || redacted.length >= text.length
    )
      redactions.push(
        `${name}: ${redacted.length} characters back, ${JSON.stringify(redacted.slice(0, 40))}…`,
      );
  }
  t.same(verdicts, [], `looksLikeSecret: secret exactly for the secret-shaped runs (${atoms.length} atoms)`);
  t.same(
    redactions,
    [],
    `redactSecrets: a harmless run comes back unchanged, a secret-shaped one shorter and redacted (${atoms.length} atoms)`,
  );
  const kinds = atoms.filter(([, kind]) => kind !== undefined);
  t.same(
    kinds.map(([atom]) => secretKind(atom.repeat(Math.ceil(MiB / atom.length)))),
    kinds.map(([, kind]) => kind),
    `secretKind names the rule each secret-shaped run trips (${kinds.map(([a]) => a).join(', ')})`,
  );
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
