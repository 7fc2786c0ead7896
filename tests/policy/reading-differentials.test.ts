/**
 * Requests that two servers read differently: every reading a major server could execute must
 * be covered by the class, or the request is unparsed (at least write; destructive where an
 * override makes some root field destructive). Each case names the server whose reading it is.
 */
import t from 'tap';
import { type ClassifyInput, classify, type WireOverride } from '../../src/policy/index.js';
import { GH_ISSUE_CREATE, GH_ISSUE_LIST, gqlPost } from './fixtures/index.js';

const DELETE_REPO: WireOverride = { match: { graphqlOperation: 'deleteRepository' }, wireClass: 'destructive' };
const DEL = 'mutation { deleteRepository(input: {}) { x } }';
const TWO = 'query Q { viewer { login } } mutation M { deleteRepository(input: {}) { x } }';
/** pads a JSON body past the size where the byte reader takes over from JSON.parse */
const PAD = 'x'.repeat(40 * 1024);

function verdict(input: ClassifyInput) {
  const r = classify({ ...input, overrides: [DELETE_REPO] });
  return { class: r.class, why: r.graphql?.unparsedReason };
}

t.test('JSON bodies whose members parsers pick differently are unparsed', async (t) => {
  const bodies: Record<string, string> = {
    // Go's encoding/json, simdjson and gjson keep the first of two keys; JSON.parse the last
    'two query keys, the mutation first': `{"query":"${DEL}","query":"{ a }"}`,
    'two query keys, the mutation last': `{"query":"{ a }","query":"${DEL}"}`,
    // Go's encoding/json (gqlgen, graph-gophers) and ASP.NET's web defaults ignore case
    'query and Query': `{"query":"{ a }","Query":"${DEL}"}`,
    'query and QUERY, the other order': `{"QUERY":"${DEL}","query":"{ a }"}`,
    'operationName and OperationName': `{"query":"${TWO}","operationName":"Q","OperationName":"M"}`,
    'two operationName keys': `{"query":"${TWO}","operationName":"M","operationName":"Q"}`,
    // a parser that compares key bytes never decodes the escape
    'an escaped second query': `{"query":"{ a }","qu\\u0065ry":"${DEL}"}`,
    // Go folds ſ (U+017F) to s
    'extensions and extenſions': `{"query":"{ a }","extensions":{},"extenſions":{"persistedQuery":{"sha256Hash":"ab"}}}`,
    'a clash in the second batch element': `[{"query":"{ a }"},{"query":"{ a }","Query":"${DEL}"}]`,
  };
  for (const [name, text] of Object.entries(bodies)) {
    for (const [size, body] of [
      ['small', text],
      ['large', text.replace(/}\s*$/, `,"pad":"${PAD}"}`).replace(/}\]$/, `,"pad":"${PAD}"}]`)],
    ] as const) {
      t.same(verdict(gqlPost(body)), { class: 'destructive', why: 'duplicate-key' }, `${name} (${size})`);
    }
  }
});

t.test('bodies without a clash keep their reading', async (t) => {
  t.same(verdict(gqlPost({ query: GH_ISSUE_LIST, variables: { owner: 'a', repo: 'b', query: 'x', Query: 'y' } })), { class: 'read', why: undefined }, 'keys inside variables do not count');
  t.same(verdict(gqlPost({ query: GH_ISSUE_CREATE, variables: { input: { body: 'a < b & c' } } })), { class: 'write', why: undefined }, 'gh escapes <, > and & as \\u003c…');
  t.same(verdict(gqlPost(`{"query":"{ a }","variables":{"x":"\\u003c"}}`)), { class: 'read', why: undefined }, 'a \\u escape in a value');
  t.same(verdict(gqlPost(`{"operationName":"query","query":"query query { a }"}`)), { class: 'read', why: undefined }, 'a value spelt like a key');
  t.same(verdict(gqlPost(`{"Query":"${DEL}"}`)), { class: 'destructive', why: 'missing-query' }, 'a lone case variant is no document to JSON.parse');
});
