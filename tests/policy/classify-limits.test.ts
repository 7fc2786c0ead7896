import t from 'tap';
import { classify, scanDocument } from '../../src/policy/index.js';
import { gqlPost } from './fixtures/index.js';

t.test('an 8 MiB string argument in a mutation is scanned, not choked on', async (t) => {
  const big = 'x'.repeat(8 * 1024 * 1024 - 200);
  const c = classify(
    gqlPost({ query: `mutation { createIssue(input: {body: "${big}"}) { issue { url } } }` }),
  );
  t.equal(c.class, 'write');
  t.same(
    c.graphql?.operations.map((o) => o.rootFields),
    [['createIssue']],
  );
});

t.test('a body over the cap is unparsed (at least write), even for a query', async (t) => {
  const pad = ' '.repeat(8 * 1024 * 1024);
  const c = classify(gqlPost(`{"query": "{ a }", "pad": "${pad}"}`));
  t.equal(c.class, 'write');
  t.equal(c.graphql?.unparsedReason, 'size-limit');
  const small = classify({ ...gqlPost({ query: '{ a }' }), limits: { bodyCap: 5 } });
  t.equal(small.graphql?.unparsedReason, 'size-limit', 'the engine can pass a tighter cap');
});

t.test('many tokens: within the limit a read, past it unparsed', async (t) => {
  const args = '1 '.repeat(400_000);
  t.equal(classify(gqlPost({ query: `{ a(x: [${args}]) }` })).class, 'read', '400k tokens');
  const over = classify(gqlPost({ query: `{ a(x: [${'1 '.repeat(1_000_001)}]) }` }));
  t.same([over.class, over.graphql?.unparsedReason], ['write', 'token-limit'], 'past 1M tokens');
  const tight = classify({ ...gqlPost({ query: '{ a b c }' }), limits: { maxTokens: 4 } });
  t.equal(tight.graphql?.unparsedReason, 'token-limit', 'a custom token limit');
});

t.test('root field and fragment-expansion limits', async (t) => {
  const many = Array.from({ length: 10_001 }, (_, i) => `f${i}`).join(' ');
  t.same(scanDocument(`{ ${many} }`), { ok: false, reason: 'root-field-limit' });
  // each fragment spreads the next twice: expansion is bounded by the same budget
  const frags = Array.from({ length: 200 }, (_, i) => `fragment F${i} on Q { a${i} ...F${i + 1} }`).join(
    '\n',
  );
  const r = scanDocument(
    `${Array.from({ length: 100 }, (_, i) => `query Q${i} { ...F0 }`).join('\n')}\n${frags}\nfragment F200 on Q { z }`,
  );
  t.same(r, { ok: false, reason: 'root-field-limit' });
  t.same(
    scanDocument('{ ...A } fragment A on Q { ...B } fragment B on Q { ...A x }'),
    { ok: true, operations: [{ type: 'query', name: undefined, rootFields: ['x'] }] },
    'a fragment cycle terminates',
  );
});
// Heap growth is measured by bench/micro/graphql-classify.ts, where GC can be controlled.
