/** The canonical JSON a manifest object is pinned by: keys sorted at every depth, no whitespace, arrays kept in order. */
import { createHash } from 'node:crypto';
import t from 'tap';
import { canonicalManifestJson, manifestSha256 } from '../../src/config/index.js';

t.test('canonical JSON', async (t) => {
  const cases: Record<string, [unknown, string]> = {
    'keys sorted at every depth': [
      { b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' } },
      '{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}',
    ],
    'array order kept': [['b', 'a'], '["b","a"]'],
    'undefined members left out': [{ a: undefined, b: null }, '{"b":null}'],
    'no whitespace, strings escaped as JSON': [{ 'k y': 'a "q"\n' }, '{"k y":"a \\"q\\"\\n"}'],
    'upper case sorts before lower case (code units)': [{ b: 1, B: 2, a: 3 }, '{"B":2,"a":3,"b":1}'],
  };
  t.plan(Object.keys(cases).length);
  for (const [name, [input, want]] of Object.entries(cases))
    t.equal(canonicalManifestJson(input), want, name);
});

t.test('manifestSha256: bytes and text as they are, an object by its canonical JSON', async (t) => {
  const sha = (s: string) => createHash('sha256').update(s).digest('hex');
  t.equal(manifestSha256('{ "id": "x" }\n'), sha('{ "id": "x" }\n'));
  t.equal(manifestSha256(Buffer.from('{"id":"x"}')), sha('{"id":"x"}'));
  t.equal(manifestSha256({ id: 'x', clis: [] }), sha('{"clis":[],"id":"x"}'));
});
