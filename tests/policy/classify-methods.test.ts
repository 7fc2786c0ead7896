import t from 'tap';
import { classify, needsBody } from '../../src/policy/index.js';
import { req } from './fixtures/index.js';

t.test('method table (DESIGN §4)', async (t) => {
  const cases: Record<string, [method: string, cls: string, reason: string]> = {
    'GET is read': ['GET', 'read', 'method-read'],
    'HEAD is read': ['HEAD', 'read', 'method-read'],
    'OPTIONS is read': ['OPTIONS', 'read', 'method-read'],
    'POST is write': ['POST', 'write', 'method-write'],
    'PUT is write': ['PUT', 'write', 'method-write'],
    'PATCH is write': ['PATCH', 'write', 'method-write'],
    'DELETE is destructive': ['DELETE', 'destructive', 'method-destructive'],
    'an unknown method is write': ['PROPFIND', 'write', 'method-other'],
    'a lower-case get is another method (write)': ['get', 'write', 'method-other'],
    'a lower-case delete is another method (write, not read)': ['delete', 'write', 'method-other'],
    'an empty method is write': ['', 'write', 'method-other'],
  };
  t.plan(Object.keys(cases).length);
  for (const [name, [method, cls, reason]] of Object.entries(cases)) {
    const c = classify(req(method, '/repos/acme/app'));
    t.same({ class: c.class, reason: c.reason, overridesApplied: c.overridesApplied }, { class: cls, reason, overridesApplied: [] }, name);
  }
});

t.test('method-override headers never change the class', async (t) => {
  const headers = { 'x-http-method-override': 'DELETE', 'x-http-method': 'DELETE', 'x-method-override': 'GET' };
  t.plan(3);
  t.equal(classify(req('GET', '/x', { headers })).class, 'read', 'GET claiming DELETE stays read');
  t.equal(classify(req('POST', '/x', { headers })).class, 'write', 'POST claiming DELETE stays write');
  t.equal(classify(req('DELETE', '/x', { headers })).class, 'destructive', 'DELETE claiming GET stays destructive');
});

t.test('needsBody: a POST whose last path segment is exactly graphql', async (t) => {
  const cases: Record<string, [method: string, target: string, want: boolean]> = {
    'POST /graphql': ['POST', '/graphql', true],
    'POST /api/graphql (GHE)': ['POST', '/api/graphql', true],
    'POST /graphql?x=1': ['POST', '/graphql?x=1', true],
    'GET /graphql (the query string carries it)': ['GET', '/graphql?query=%7Ba%7D', false],
    'POST /graphqlx': ['POST', '/graphqlx', false],
    'POST /graphql/ (empty last segment)': ['POST', '/graphql/', false],
    'POST /graphql/schema': ['POST', '/graphql/schema', false],
    'POST /repos/a/b/issues': ['POST', '/repos/a/b/issues', false],
    'PUT /graphql': ['PUT', '/graphql', false],
  };
  t.plan(Object.keys(cases).length);
  for (const [name, [method, target, want]] of Object.entries(cases)) {
    t.equal(needsBody({ method, target, headers: {} }), want, name);
  }
});

t.test('a GraphQL POST without a body is at least write', async (t) => {
  const c = classify(req('POST', '/graphql', { headers: { 'content-type': 'application/json' } }));
  t.equal(c.class, 'write');
  t.equal(c.reason, 'graphql-unparsed');
  t.equal(c.graphql?.parsed, false);
  t.equal(c.graphql?.unparsedReason, 'no-body');
});
