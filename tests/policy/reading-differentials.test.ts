/**
 * Requests that two servers read differently: every reading a major server could execute must
 * be covered by the class, or the request is unparsed (at least write; destructive where an
 * override makes some root field destructive). Each case names the server whose reading it is.
 */
import t from 'tap';
import { type ClassifyInput, classify, needsBody, type WireOverride } from '../../src/policy/index.js';
import { GH_ISSUE_CREATE, GH_ISSUE_LIST, gqlPost, JSON_UTF8, req } from './fixtures/index.js';

const q = (s: string) => encodeURIComponent(s);
const DELETE_REPO: WireOverride = {
  match: { graphqlOperation: 'deleteRepository' },
  wireClass: 'destructive',
};
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
  t.same(
    verdict(gqlPost({ query: GH_ISSUE_LIST, variables: { owner: 'a', repo: 'b', query: 'x', Query: 'y' } })),
    { class: 'read', why: undefined },
    'keys inside variables do not count',
  );
  t.same(
    verdict(gqlPost({ query: GH_ISSUE_CREATE, variables: { input: { body: 'a < b & c' } } })),
    { class: 'write', why: undefined },
    'gh escapes <, > and & as \\u003c…',
  );
  t.same(
    verdict(gqlPost(`{"query":"{ a }","variables":{"x":"\\u003c"}}`)),
    { class: 'read', why: undefined },
    'a \\u escape in a value',
  );
  t.same(
    verdict(gqlPost(`{"operationName":"query","query":"query query { a }"}`)),
    { class: 'read', why: undefined },
    'a value spelt like a key',
  );
  t.same(
    verdict(gqlPost(`{"Query":"${DEL}"}`)),
    { class: 'destructive', why: 'missing-query' },
    'a lone case variant is no document to JSON.parse',
  );
});

t.test('query-string parameters that some server reads as GraphQL', async (t) => {
  const get: Record<string, [string, string | undefined]> = {
    // ASP.NET Core's query collection ignores case (Hot Chocolate, GraphQL.NET)
    '?Query=': [`/graphql?Query=${q(DEL)}`, undefined],
    '?QUERY= with ?operationname=': [`/graphql?QUERY=${q(TWO)}&operationname=M`, undefined],
    '?query= and ?Query=': [`/graphql?query=${q('{ a }')}&Query=${q(DEL)}`, 'duplicate-param'],
    '?operationName= and ?OperationName=': [
      `/graphql?query=${q(TWO)}&operationName=Q&OperationName=M`,
      'duplicate-param',
    ],
    // PHP drops leading spaces of a parameter name (graphql-php, Lighthouse)
    '? query= (PHP)': [`/graphql?%20query=${q(DEL)}`, undefined],
    '?+query= (PHP)': [`/graphql?+query=${q(DEL)}`, undefined],
    // Rack 2 (Rails, graphql-ruby) and Python before 3.9.2 also split at `;`
    '?x=1;query= (Rack 2)': [`/graphql?x=1;query=${q(DEL)}`, 'bad-query-string'],
    '?query=…;operationName= (Rack 2)': [`/graphql?query=${q(TWO)};operationName=M`, 'bad-query-string'],
    // a server that decodes once more (or IIS's %u)
    '?%2571uery= (double-encoded name)': [`/graphql?%2571uery=${q(DEL)}`, undefined],
    '?%u0071uery= (IIS)': [`/graphql?%u0071uery=${q(DEL)}`, 'bad-query-string'],
    // persisted documents by id: an unknown stored document runs
    '?documentId= (GraphQL over HTTP)': ['/graphql?documentId=sha256:ab', 'persisted-query'],
    '?id= (Hot Chocolate)': ['/graphql?id=ab', 'persisted-query'],
    '?doc_id= (Relay)': ['/graphql?doc_id=1234', 'persisted-query'],
    '?Extensions= without a query': [
      `/graphql?Extensions=${q('{"persistedQuery":{"sha256Hash":"ab"}}')}`,
      'persisted-query',
    ],
  };
  for (const [name, [target, why]] of Object.entries(get)) {
    for (const method of ['GET', 'HEAD']) {
      const v = verdict(req(method, target));
      t.equal(v.class, 'destructive', `${method} ${name}`);
      t.equal(v.why, why, `${method} ${name}: ${why ?? 'parsed'}`);
    }
  }
  const body = Buffer.from(JSON.stringify({ query: '{ a }' }));
  const post: Record<string, string> = {
    // Rails merges query parameters over body parameters; express-graphql reads the URL first
    '?Query=': `/graphql?Query=${q(DEL)}`,
    '? query=': `/graphql?%20query=${q(DEL)}`,
    '?x;query= (Rack 2)': `/graphql?x;query=${q(DEL)}`,
    '?x;operationName= (Rack 2)': '/graphql?x;operationName=M',
    '?OperationName= and ?operationName=': '/graphql?operationName=Q&OperationName=M',
    // Go's ParseRequestURI keeps `#…` in the query string
    '?x#&query=': `/graphql?x#&query=${q(DEL)}`,
    '#?query=': `/graphql#?query=${q(DEL)}`,
  };
  for (const [name, target] of Object.entries(post)) {
    const v = verdict({ method: 'POST', target, headers: JSON_UTF8, body });
    t.equal(v.class, 'destructive', `POST ${name}`);
    t.not(v.why, undefined, `POST ${name}: unparsed (${v.why})`);
  }
});

t.test('query strings that are no GraphQL keep the method table', async (t) => {
  t.same(classify(req('GET', '/graphql?x=1;y=2')).reason, 'method-read', 'a `;` with no GraphQL parameter');
  t.same(
    classify(req('GET', '/graphql?queryx=1&xquery=2')).reason,
    'method-read',
    'names that merely contain query',
  );
  t.same(
    classify(req('GET', '/repos/graphql/graphql-js/issues?per_page=100&state=open')).reason,
    'method-read',
    'a REST path under an owner named graphql',
  );
  const r = classify({
    method: 'POST',
    target: '/graphql',
    headers: JSON_UTF8,
    body: Buffer.from(JSON.stringify({ query: GH_ISSUE_LIST })),
  });
  t.equal(r.class, 'read', 'gh: POST /graphql with no query string');
});

t.test('an override naming a root field at a path declares that path a GraphQL endpoint', async (t) => {
  // monday.com serves GraphQL at /v2: no `graphql` segment
  const DELETE_BOARD: WireOverride = {
    match: { pathPattern: '/v2', graphqlOperation: 'delete_board' },
    wireClass: 'destructive',
  };
  const headers = JSON_UTF8;
  const del = { method: 'POST', target: '/v2', headers, overrides: [DELETE_BOARD] };
  t.equal(needsBody(del, del.overrides), true, 'needsBody asks for the body when given the overrides');
  const withBody = (query: string, target = '/v2') =>
    classify({ ...del, target, body: Buffer.from(JSON.stringify({ query })) });
  t.equal(
    withBody('mutation { delete_board(board_id: 1) { id } }').class,
    'destructive',
    'the destructive root field is seen',
  );
  t.equal(
    withBody('mutation { delete_board(board_id: 1) { id } }', '/V2/').class,
    'destructive',
    'in any spelling of the path',
  );
  t.equal(withBody('query { boards { id } }').class, 'read', 'a query at the endpoint is a read');
  t.equal(classify(del).class, 'destructive', 'without its body the root fields are unknown');
  t.equal(
    classify({
      ...del,
      target: '/v1',
      body: Buffer.from(JSON.stringify({ query: 'mutation { delete_board }' })),
    }).class,
    'write',
    'another path is not the endpoint',
  );
  t.equal(
    needsBody({ method: 'POST', target: '/v2', headers }),
    false,
    'without the overrides the path is REST',
  );
});
