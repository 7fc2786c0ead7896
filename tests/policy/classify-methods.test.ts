import t from 'tap';
import { classify, needsBody } from '../../src/policy/index.js';
import { req } from './fixtures/index.js';

t.test('method table', async (t) => {
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
    t.same(
      { class: c.class, reason: c.reason, overridesApplied: c.overridesApplied },
      { class: cls, reason, overridesApplied: [] },
      name,
    );
  }
});

t.test('method-override headers never change the class', async (t) => {
  const headers = {
    'x-http-method-override': 'DELETE',
    'x-http-method': 'DELETE',
    'x-method-override': 'GET',
  };
  t.plan(3);
  t.equal(classify(req('GET', '/x', { headers })).class, 'read', 'GET claiming DELETE stays read');
  t.equal(classify(req('POST', '/x', { headers })).class, 'write', 'POST claiming DELETE stays write');
  t.equal(
    classify(req('DELETE', '/x', { headers })).class,
    'destructive',
    'DELETE claiming GET stays destructive',
  );
});

t.test(
  'needsBody: any method at a path that may reach GraphQL, or a body servers may parse as a form',
  async (t) => {
    const JSON_CT = { 'content-type': 'application/json' };
    const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
    const cases: Record<
      string,
      [method: string, target: string, headers: Record<string, string>, want: boolean]
    > = {
      'POST /graphql': ['POST', '/graphql', JSON_CT, true],
      'POST /api/graphql (GHE)': ['POST', '/api/graphql', JSON_CT, true],
      'POST /graphql?x=1': ['POST', '/graphql?x=1', JSON_CT, true],
      'GET /graphql (a GET body is executed by servers that read it)': [
        'GET',
        '/graphql?query=%7Ba%7D',
        JSON_CT,
        true,
      ],
      'HEAD /GraphQL/': ['HEAD', '/GraphQL/', JSON_CT, true],
      'PUT /graphql': ['PUT', '/graphql', JSON_CT, true],
      'POST /graphql/ (trailing slash)': ['POST', '/graphql/', JSON_CT, true],
      'POST /graphql/schema (prefix mounts serve it)': ['POST', '/graphql/schema', JSON_CT, true],
      'POST /graphql.json (Rails formats)': ['POST', '/graphql.json', JSON_CT, true],
      'POST /graphq%6c': ['POST', '/graphq%6c', JSON_CT, true],
      'POST /graphqlx': ['POST', '/graphqlx', JSON_CT, false],
      'POST /repos/a/b/issues (JSON keeps streaming)': ['POST', '/repos/a/b/issues', JSON_CT, false],
      'POST /repos/a/b/issues (urlencoded: _method)': ['POST', '/repos/a/b/issues', FORM, true],
      'POST with no content type (Rack parses it as a form)': ['POST', '/x', {}, true],
      'PUT with no content type (curl -T: keeps streaming)': ['PUT', '/upload', {}, false],
      'PUT urlencoded': ['PUT', '/x', FORM, true],
      'PUT upload (octet-stream keeps streaming)': [
        'PUT',
        '/upload',
        { 'content-type': 'application/octet-stream' },
        false,
      ],
    };
    t.plan(Object.keys(cases).length);
    for (const [name, [method, target, headers, want]] of Object.entries(cases)) {
      t.equal(needsBody({ method, target, headers }), want, name);
    }
  },
);

t.test('a GraphQL POST without a body is at least write', async (t) => {
  const c = classify(req('POST', '/graphql', { headers: { 'content-type': 'application/json' } }));
  t.equal(c.class, 'write');
  t.equal(c.reason, 'graphql-unparsed');
  t.equal(c.graphql?.parsed, false);
  t.equal(c.graphql?.unparsedReason, 'no-body');
});
