import t from 'tap';
import { type ClassifyInput, classify } from '../../src/policy/index.js';
import {
  GH_ADD_STAR,
  GH_ISSUE_CREATE,
  GH_ISSUE_FIELDS,
  GH_ISSUE_LIST,
  GH_RELEASE_BY_TAG,
  GH_REPOSITORY_INFO,
  gqlPost,
  JSON_UTF8,
  req,
} from './fixtures/index.js';

const q = (s: string) => encodeURIComponent(s);

interface Want {
  class: string;
  reason: string;
  /** the unparsed reason, for unparsed documents */
  why?: string;
  /** root fields of the counted operations */
  fields?: string[];
  names?: (string | undefined)[];
}

const cases: Record<string, [ClassifyInput, Want]> = {
  'gh IssueList: a leading fragment, then the query': [
    gqlPost({ query: GH_ISSUE_LIST, variables: { limit: 30, owner: 'acme', repo: 'app', states: ['OPEN'] } }),
    { class: 'read', reason: 'graphql-query', fields: ['repository'], names: ['IssueList'] },
  ],
  'gh RepositoryInfo: starts with \\n\\tfragment': [
    gqlPost({ query: GH_REPOSITORY_INFO, variables: { name: 'app', owner: 'acme' } }),
    { class: 'read', reason: 'graphql-query', fields: ['repository'], names: ['RepositoryInfo'] },
  ],
  'gh RepositoryReleaseByTag: minified, plain application/json': [
    gqlPost(
      { query: GH_RELEASE_BY_TAG, variables: { name: 'app', owner: 'acme', tagName: 'v1.0' } },
      '/graphql',
      { 'content-type': 'application/json' },
    ),
    { class: 'read', reason: 'graphql-query', fields: ['repository'], names: ['RepositoryReleaseByTag'] },
  ],
  'gh IssueCreate mutation': [
    gqlPost({
      query: GH_ISSUE_CREATE,
      variables: { input: { body: 'y', repositoryId: 'R_kgDOAcmeApp', title: 'x' } },
    }),
    { class: 'write', reason: 'graphql-mutation', fields: ['createIssue'], names: ['IssueCreate'] },
  ],
  'anonymous mutation { addStar(…) } with no variables key': [
    gqlPost({ query: GH_ADD_STAR }),
    { class: 'write', reason: 'graphql-mutation', fields: ['addStar'], names: [undefined] },
  ],
  'GHE: aliased introspection root Issue: __type(…) on /api/graphql': [
    gqlPost({ query: GH_ISSUE_FIELDS }, '/api/graphql'),
    { class: 'read', reason: 'graphql-query', fields: ['__type'] },
  ],
  'a root __typename is a read': [
    gqlPost({ query: '{ __typename }' }),
    { class: 'read', reason: 'graphql-query', fields: ['__typename'] },
  ],
  'an alias resolves to the field name (a mutation aliased as a query-ish name)': [
    gqlPost({ query: 'mutation { viewer: deleteRepository(input:{}) { x } }' }),
    { class: 'write', reason: 'graphql-mutation', fields: ['deleteRepository'] },
  ],
  'a fragment spread and inline fragment at the root resolve to their fields': [
    gqlPost({
      query:
        'mutation M { ...F ... on Mutation { b } ... @include(if: true) { c } } fragment F on Mutation { a ...G } fragment G on Mutation { d }',
    }),
    { class: 'write', reason: 'graphql-mutation', fields: ['b', 'c', 'a', 'd'] },
  ],
  'GET ?query=mutation… (gh api -X GET)': [
    req('GET', `/graphql?query=${q('mutation { addStar(input:{starrableId:"x"}) { clientMutationId } }')}`),
    { class: 'write', reason: 'graphql-mutation', fields: ['addStar'] },
  ],
  'GET ?query= with + for spaces': [
    req('GET', '/graphql?query=mutation+%7B+addStar+%7D'),
    { class: 'write', reason: 'graphql-mutation', fields: ['addStar'] },
  ],
  'GET ?query=query… is a read': [
    req('GET', `/graphql?query=${q('query { viewer { login } }')}`),
    { class: 'read', reason: 'graphql-query', fields: ['viewer'] },
  ],
  'GET /graphql with no query is a plain read': [
    req('GET', '/graphql'),
    { class: 'read', reason: 'method-read' },
  ],
  'GET /graphql/ (trailing slash) still scans ?query=': [
    req('GET', `/graphql/?query=${q('mutation{a}')}`),
    { class: 'write', reason: 'graphql-mutation' },
  ],
  'HEAD /graphql?query=mutation is write (HEAD runs the GET handler)': [
    req('HEAD', `/graphql?query=${q('mutation{a}')}`),
    { class: 'write', reason: 'graphql-mutation' },
  ],
  'GET /GraphQL;x?query=mutation is write': [
    req('GET', `/GraphQL;x?query=${q('mutation{a}')}`),
    { class: 'write', reason: 'graphql-mutation' },
  ],
  'GET with two query params is unparsed': [
    req('GET', `/graphql?query=${q('{a}')}&query=${q('mutation{b}')}`),
    { class: 'write', reason: 'graphql-unparsed', why: 'duplicate-param' },
  ],
  'GET ?query= with a body that was not read is unparsed': [
    req('GET', `/graphql?query=${q('{a}')}`, { headers: { 'content-length': '20' } }),
    { class: 'write', reason: 'graphql-unparsed', why: 'no-body' },
  ],
  'GET persisted query hash without a document': [
    req('GET', `/graphql?extensions=${q('{"persistedQuery":{"version":1,"sha256Hash":"abc"}}')}`),
    { class: 'write', reason: 'graphql-unparsed', why: 'persisted-query' },
  ],
  'operationName selects the query out of query+mutation': [
    gqlPost({ query: 'query Q1 { a } mutation M1 { b }', operationName: 'Q1' }),
    { class: 'read', reason: 'graphql-query', fields: ['a'], names: ['Q1'] },
  ],
  'operationName selects the mutation (gh -f operationName=M1)': [
    gqlPost({ query: 'query Q1 { a } mutation M1 { b }', operationName: 'M1' }),
    { class: 'write', reason: 'graphql-mutation', fields: ['b'], names: ['M1'] },
  ],
  'several operations and no operationName: the highest of all': [
    gqlPost({ query: 'query Q1 { a } mutation M1 { b }' }),
    { class: 'write', reason: 'graphql-mutation', fields: ['a', 'b'] },
  ],
  'an unknown operationName: the highest of all': [
    gqlPost({ query: 'query Q1 { a } mutation M1 { b }', operationName: 'Nope' }),
    { class: 'write', reason: 'graphql-mutation' },
  ],
  'operationName in the URL disagreeing with the body: the highest of all': [
    gqlPost({ query: 'query Q1 { a } mutation M1 { b }', operationName: 'Q1' }, '/graphql?operationName=M1'),
    { class: 'write', reason: 'graphql-mutation' },
  ],
  'a JSON batch: the highest class wins': [
    gqlPost([{ query: GH_ISSUE_LIST }, { query: GH_ISSUE_CREATE }]),
    { class: 'write', reason: 'graphql-mutation', fields: ['repository', 'createIssue'] },
  ],
  'a JSON batch of queries is a read': [
    gqlPost([{ query: '{a}' }, { query: 'query { b }' }]),
    { class: 'read', reason: 'graphql-query' },
  ],
  'a batch with one unparsable element is unparsed': [
    gqlPost([{ query: '{a}' }, { query: '{' }]),
    { class: 'write', reason: 'graphql-unparsed', why: 'syntax' },
  ],
  'an empty batch': [gqlPost([]), { class: 'write', reason: 'graphql-unparsed', why: 'empty-batch' }],
  'a subscription is write': [
    gqlPost({ query: 'subscription S { issueUpdated { id } }' }),
    { class: 'write', reason: 'graphql-subscription' },
  ],
  'comments do not hide a mutation': [
    gqlPost({ query: '# query {\nmutation { a }' }),
    { class: 'write', reason: 'graphql-mutation', fields: ['a'] },
  ],
  'a comment ended by a bare CR is ambiguous (graphql-ruby runs it to LF)': [
    gqlPost({ query: '# harmless\rmutation { a }' }),
    { class: 'write', reason: 'graphql-unparsed', why: 'ambiguous' },
  ],
  'a comment ended by CRLF is fine': [
    gqlPost({ query: '# harmless\r\nmutation { a }' }),
    { class: 'write', reason: 'graphql-mutation' },
  ],
  'a mutation inside a string is not an operation': [
    gqlPost({ query: '{ a(s: "mutation { b }") }' }),
    { class: 'read', reason: 'graphql-query', fields: ['a'] },
  ],
  'unicode escapes and an escaped quote inside a string': [
    gqlPost({ query: '{ a(s: "\\u0022} mutation { x }\\"\\\\") b }' }),
    { class: 'read', reason: 'graphql-query', fields: ['a', 'b'] },
  ],
  'a block string with an escaped triple quote is ambiguous (graphql-java ends it there)': [
    gqlPost({ query: '{ a(s: """x \\""" } mutation { y }""") }' }),
    { class: 'write', reason: 'graphql-unparsed', why: 'ambiguous' },
  ],
  'application/graphql body': [
    {
      method: 'POST',
      target: '/graphql',
      headers: { 'content-type': 'application/graphql' },
      body: Buffer.from(GH_ADD_STAR),
    },
    { class: 'write', reason: 'graphql-mutation', fields: ['addStar'] },
  ],
  'malformed JSON': [
    gqlPost('{"query": "{ a }"'),
    { class: 'write', reason: 'graphql-unparsed', why: 'not-json' },
  ],
  'JSON that is not an object': [
    gqlPost('"{ a }"'),
    { class: 'write', reason: 'graphql-unparsed', why: 'bad-shape' },
  ],
  'query that is not a string': [
    gqlPost({ query: ['{ a }'] }),
    { class: 'write', reason: 'graphql-unparsed', why: 'bad-shape' },
  ],
  'operationName that is not a string': [
    gqlPost({ query: '{ a }', operationName: 1 }),
    { class: 'write', reason: 'graphql-unparsed', why: 'bad-shape' },
  ],
  'persisted-query hash without a document': [
    gqlPost({ extensions: { persistedQuery: { version: 1, sha256Hash: 'ab' } } }),
    { class: 'write', reason: 'graphql-unparsed', why: 'persisted-query' },
  ],
  'no query at all': [
    gqlPost({ variables: {} }),
    { class: 'write', reason: 'graphql-unparsed', why: 'missing-query' },
  ],
  'an empty document': [
    gqlPost({ query: '  \n# only a comment\n' }),
    { class: 'write', reason: 'graphql-unparsed', why: 'empty' },
  ],
  'fragments only, no operation': [
    gqlPost({ query: 'fragment F on Q { a }' }),
    { class: 'write', reason: 'graphql-unparsed', why: 'no-operation' },
  ],
  'a truncated document': [
    gqlPost({ query: GH_ISSUE_LIST.slice(0, 400) }),
    { class: 'write', reason: 'graphql-unparsed', why: 'syntax' },
  ],
  'an unterminated string': [
    gqlPost({ query: '{ a(s: "abc) }' }),
    { class: 'write', reason: 'graphql-unparsed', why: 'syntax' },
  ],
  'a type-system document': [
    gqlPost({ query: 'type Query { a: Int }' }),
    { class: 'write', reason: 'graphql-unparsed', why: 'not-executable' },
  ],
  'an empty root selection set': [
    gqlPost({ query: 'mutation {}' }),
    { class: 'write', reason: 'graphql-unparsed', why: 'syntax' },
  ],
  'an unknown fragment': [
    gqlPost({ query: '{ ...Nope }' }),
    { class: 'write', reason: 'graphql-unparsed', why: 'unknown-fragment' },
  ],
  'a wrong content type (form)': [
    gqlPost({ query: '{ a }' }, '/graphql', { 'content-type': 'application/x-www-form-urlencoded' }),
    { class: 'write', reason: 'graphql-unparsed', why: 'content-type' },
  ],
  'no content type': [
    gqlPost({ query: '{ a }' }, '/graphql', {}),
    { class: 'write', reason: 'graphql-unparsed', why: 'content-type' },
  ],
  'a compressed body (Content-Encoding: gzip)': [
    gqlPost({ query: '{ a }' }, '/graphql', { ...JSON_UTF8, 'content-encoding': 'gzip' }),
    { class: 'write', reason: 'graphql-unparsed', why: 'content-encoding' },
  ],
  'Content-Encoding: identity is no encoding': [
    gqlPost({ query: '{ a }' }, '/graphql', { ...JSON_UTF8, 'content-encoding': 'identity' }),
    { class: 'read', reason: 'graphql-query' },
  ],
  'GET with a malformed percent escape': [
    req('GET', '/graphql?query=%7Ba%7D%zz'),
    { class: 'write', reason: 'graphql-unparsed', why: 'bad-query-string' },
  ],
  'a non-UTF-8 charset': [
    gqlPost({ query: '{ a }' }, '/graphql', { 'content-type': 'application/json; charset=utf-16' }),
    { class: 'write', reason: 'graphql-unparsed', why: 'charset' },
  ],
  'invalid UTF-8 bytes': [
    {
      method: 'POST',
      target: '/graphql',
      headers: JSON_UTF8,
      body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]),
    },
    { class: 'write', reason: 'graphql-unparsed', why: 'encoding' },
  ],
  'a POST with ?query= in the URL as well as a body': [
    gqlPost({ query: '{ a }' }, `/graphql?query=${q('mutation{b}')}`),
    { class: 'write', reason: 'graphql-unparsed', why: 'ambiguous-source' },
  ],
  'a POST to /graphql/ is GraphQL like /graphql (servers route both to one handler)': [
    gqlPost({ query: '{ a }' }, '/graphql/'),
    { class: 'read', reason: 'graphql-query' },
  ],
  'a POST to /graphqlx is not GraphQL: the method table (write)': [
    gqlPost({ query: '{ a }' }, '/graphqlx'),
    { class: 'write', reason: 'method-write' },
  ],
  'deep nesting below the root is skipped without recursion': [
    gqlPost({ query: `{ a ${'{ b '.repeat(100_000)}${'} '.repeat(100_000)}}` }),
    { class: 'read', reason: 'graphql-query', fields: ['a'] },
  ],
  'deep root inline fragments do not recurse': [
    gqlPost({ query: `mutation { ${'... { '.repeat(50_000)}x${' }'.repeat(50_000)} }` }),
    { class: 'write', reason: 'graphql-mutation', fields: ['x'] },
  ],
};

t.test('GraphQL classification', async (t) => {
  t.plan(Object.keys(cases).length);
  for (const [name, [input, want]] of Object.entries(cases)) {
    const c = classify(input);
    const got: Want = { class: c.class, reason: c.reason };
    if (want.why !== undefined) got.why = c.graphql?.unparsedReason;
    if (want.fields !== undefined) got.fields = c.graphql?.operations.flatMap((o) => o.rootFields);
    if (want.names !== undefined) got.names = c.graphql?.operations.map((o) => o.name);
    t.same(got, want, name);
  }
});

t.test('parsed operations are reported with type, name and batch index', async (t) => {
  const c = classify(
    gqlPost([{ query: GH_REPOSITORY_INFO }, { query: GH_ISSUE_CREATE, operationName: 'IssueCreate' }]),
  );
  t.same(c.graphql, {
    parsed: true,
    batch: true,
    operations: [
      { type: 'query', name: 'RepositoryInfo', rootFields: ['repository'], batchIndex: 0 },
      { type: 'mutation', name: 'IssueCreate', rootFields: ['createIssue'], batchIndex: 1 },
    ],
  });
});
