/**
 * GraphQL detection: one path rule for every method, and override matching that reads the
 * path the same way. Every spelling a major server routes to its GraphQL handler is parsed;
 * a `deleteRepository` sent through any of them hits the destructive override at tier write.
 */
import t from 'tap';
import { type ClassifyInput, classify, needsBody, type WireOverride } from '../../src/policy/index.js';
import { JSON_UTF8, req } from './fixtures/index.js';

const DELETE_REPO = 'mutation M { deleteRepository(input: {repositoryId: "R_1"}) { clientMutationId } }';
const DESTRUCTIVE: WireOverride = {
  match: { graphqlOperation: 'deleteRepository' },
  wireClass: 'destructive',
};
const DESTRUCTIVE_AT_PATH: WireOverride = {
  match: { pathPattern: '/graphql', graphqlOperation: 'deleteRepository' },
  wireClass: 'destructive',
};
const body = (query: string, extra: Record<string, unknown> = {}): Buffer =>
  Buffer.from(JSON.stringify({ query, ...extra }));
const q = (s: string): string => encodeURIComponent(s);

function send(
  method: string,
  target: string,
  query: string | undefined,
  overrides: WireOverride[] = [],
): ClassifyInput {
  const b = query === undefined ? undefined : body(query);
  const headers: Record<string, string> = { ...JSON_UTF8 };
  if (b !== undefined) headers['content-length'] = String(b.length);
  const input: ClassifyInput = { method, target, headers, overrides };
  if (b !== undefined) input.body = b;
  return input;
}

// Spellings of the GraphQL endpoint that some major server routes to its handler.
const GRAPHQL_SPELLINGS: [path: string, endpoint: string | undefined][] = [
  ['/graphql', '/graphql'],
  ['/graphql/', '/graphql'],
  ['/graphql//', '/graphql'],
  ['/GraphQL', '/graphql'],
  ['/GRAPHQL/', '/graphql'],
  ['/graphql;x', '/graphql'],
  ['/graphql;jsessionid=1', '/graphql'],
  ['/graphq%6c', '/graphql'],
  ['/graphq%6C', '/graphql'],
  ['/%67raphql', '/graphql'],
  ['/graph%2571l', '/graphql'], // decoded twice (a decoding proxy in front)
  ['/graph%u0071l', '/graphql'], // IIS %u
  // overlong UTF-8 (IIS 4/5, old Java decoders): %c1%a7 is g, %e0%81%b1 is q, %c0%af is /
  ['/%c1%a7raphql', '/graphql'],
  ['/graph%e0%81%b1l', '/graphql'],
  ['/graph%F0%80%81%B1l', '/graphql'],
  ['/api%c0%afgraphql', '/api/graphql'],
  ['/graphql.json', '/graphql'], // Rails formats
  ['/graphql%20', '/graphql'], // IIS trims trailing spaces
  ['/graphql%00', '/graphql'],
  ['//graphql', '/graphql'],
  ['/./graphql', '/graphql'],
  ['/x/../graphql', '/graphql'],
  ['/x/%2e%2e/graphql', '/graphql'],
  ['/graphql/x', '/graphql'], // prefix mounts (Express app.use, ASP.NET MapGraphQL /{**slug})
  ['/graphql/../x', '/graphql'], // a server that routes before resolving dot-segments
  ['/graphql#frag', '/graphql'],
  ['/api/graphql', '/api/graphql'],
  ['/api%2Fgraphql', '/api/graphql'],
  ['/api\\graphql', '/api/graphql'],
  ['/v1/GraphQL;a=b/', '/v1/graphql'],
  ['/x#/graphql', undefined],
];
const NOT_GRAPHQL = ['/graphqlx', '/graphql-v2', '/xgraphql', '/repos/a/b/issues', '/graph/ql', '/'];

t.test('every spelling is GraphQL for POST, GET, HEAD and other methods with a body', async (t) => {
  for (const [path] of GRAPHQL_SPELLINGS) {
    for (const method of ['POST', 'GET', 'HEAD', 'PUT', 'OPTIONS', 'PROPFIND']) {
      t.equal(needsBody({ method, target: path, headers: JSON_UTF8 }), true, `needsBody ${method} ${path}`);
      const c = classify(send(method, path, DELETE_REPO));
      t.equal(c.class, 'write', `${method} ${path} with a mutation body is write`);
      t.same(
        c.graphql?.operations.flatMap((o) => o.rootFields),
        ['deleteRepository'],
        `${method} ${path}: root fields read`,
      );
    }
  }
  for (const path of NOT_GRAPHQL) {
    t.equal(
      needsBody({ method: 'POST', target: path, headers: JSON_UTF8 }),
      false,
      `needsBody POST ${path} is false`,
    );
    t.equal(classify(send('POST', path, DELETE_REPO)).graphql, undefined, `POST ${path} is not GraphQL`);
  }
});

t.test(
  'at tier write, deleteRepository through any spelling and method hits the destructive override',
  async (t) => {
    for (const [path, endpoint] of GRAPHQL_SPELLINGS) {
      const overrides: WireOverride[] = [DESTRUCTIVE];
      if (endpoint !== undefined)
        overrides.push({
          match: { pathPattern: endpoint, graphqlOperation: 'deleteRepository' },
          wireClass: 'destructive',
        });
      for (const method of ['POST', 'GET', 'HEAD', 'PUT']) {
        for (const o of overrides) {
          const c = classify(send(method, path, DELETE_REPO, [o]));
          t.equal(c.class, 'destructive', `${method} ${path} (${o.match.pathPattern ?? 'any path'})`);
        }
      }
    }
    // the query string of any method but POST
    for (const method of ['GET', 'HEAD', 'OPTIONS', 'PUT']) {
      const c = classify(send(method, `/GraphQL/?query=${q(DELETE_REPO)}`, undefined, [DESTRUCTIVE_AT_PATH]));
      t.equal(c.class, 'destructive', `${method} /GraphQL/?query=deleteRepository`);
    }
  },
);

t.test('a GET with a body: parsed, or unparsed at least write', async (t) => {
  const cases: Record<string, [ClassifyInput, cls: string, reason: string, why?: string]> = {
    'a query body is a read': [send('GET', '/graphql', '{ viewer { login } }'), 'read', 'graphql-query'],
    'a mutation body is write': [send('GET', '/graphql', DELETE_REPO), 'write', 'graphql-mutation'],
    'a body that is not JSON is unparsed': [
      {
        method: 'GET',
        target: '/graphql',
        headers: { 'content-type': 'application/json', 'content-length': '3' },
        body: Buffer.from('{{{'),
      },
      'write',
      'graphql-unparsed',
      'not-json',
    ],
    'a body without a content type is unparsed': [
      { method: 'GET', target: '/graphql', headers: { 'content-length': '7' }, body: Buffer.from('{ a }  ') },
      'write',
      'graphql-unparsed',
      'content-type',
    ],
    'a declared body that was not read is unparsed': [
      { method: 'GET', target: '/graphql', headers: { 'content-length': '40' } },
      'write',
      'graphql-unparsed',
      'no-body',
    ],
    'a chunked body that was not read is unparsed': [
      { method: 'HEAD', target: '/graphql/', headers: { 'transfer-encoding': 'chunked' } },
      'write',
      'graphql-unparsed',
      'no-body',
    ],
    'Content-Length: 0 is no body': [
      { method: 'GET', target: '/graphql', headers: { 'content-length': '0' } },
      'read',
      'method-read',
    ],
    'an application/graphql body': [
      {
        method: 'GET',
        target: '/graphql',
        headers: { 'content-type': 'application/graphql', 'content-length': '15' },
        body: Buffer.from('mutation { a }'),
      },
      'write',
      'graphql-mutation',
    ],
    'a gzip body is unparsed': [
      {
        method: 'GET',
        target: '/graphql',
        headers: { ...JSON_UTF8, 'content-encoding': 'gzip', 'content-length': '5' },
        body: Buffer.from('xxxxx'),
      },
      'write',
      'graphql-unparsed',
      'content-encoding',
    ],
    'a DELETE with a query body stays destructive': [
      send('DELETE', '/graphql', '{ a }'),
      'destructive',
      'method-destructive',
    ],
    'an OPTIONS with a mutation body is write': [
      send('OPTIONS', '/graphql', 'mutation { a }'),
      'write',
      'graphql-mutation',
    ],
    'a # before the query string': [
      req('GET', `/graphql#?query=${q('mutation { a }')}`),
      'write',
      'graphql-unparsed',
      'bad-query-string',
    ],
    'a # inside the query string': [
      req('GET', `/graphql?query=${q('{ a }')}#&query=${q('mutation { a }')}`),
      'write',
      'graphql-unparsed',
      'bad-query-string',
    ],
  };
  for (const [name, [input, cls, reason, why]] of Object.entries(cases)) {
    const c = classify(input);
    t.same(
      { class: c.class, reason: c.reason, why: c.graphql?.unparsedReason },
      { class: cls, reason, why },
      name,
    );
  }
});

t.test('a GET with ?query= and a body: the higher class of the two readings', async (t) => {
  const both = (urlDoc: string, bodyDoc: string, extra = ''): ClassifyInput => ({
    ...send('GET', `/graphql?query=${q(urlDoc)}${extra}`, bodyDoc),
  });
  const c1 = classify(both('{ a }', DELETE_REPO));
  t.same([c1.class, c1.reason], ['write', 'graphql-mutation'], 'query URL, mutation body');
  t.same(
    c1.graphql?.operations.flatMap((o) => o.rootFields),
    ['a', 'deleteRepository'],
    'the operations of both readings count',
  );
  const c2 = classify(both(DELETE_REPO, '{ a }'));
  t.same([c2.class, c2.reason], ['write', 'graphql-mutation'], 'mutation URL, query body');
  const c3 = classify(both('{ a }', '{ b }'));
  t.same([c3.class, c3.reason], ['read', 'graphql-query'], 'both queries: a read');
  const bad = classify({
    method: 'GET',
    target: `/graphql?query=${q('{ a }')}`,
    headers: { 'content-type': 'text/plain', 'content-length': '4' },
    body: Buffer.from('abcd'),
  });
  t.same(
    [bad.class, bad.reason, bad.graphql?.parsed],
    ['write', 'graphql-unparsed', false],
    'query URL, unreadable body: unparsed',
  );
  const dup = classify(both('{ a }', '{ b }', '&operationName=A&operationName=B'));
  t.same(
    [dup.class, dup.graphql?.unparsedReason],
    ['write', 'duplicate-param'],
    'repeated operationName: unparsed',
  );
  for (const o of [DESTRUCTIVE, DESTRUCTIVE_AT_PATH]) {
    t.equal(
      classify({ ...both('{ a }', DELETE_REPO), overrides: [o] }).class,
      'destructive',
      'the body reading reaches the override',
    );
    t.equal(
      classify({ ...both(DELETE_REPO, '{ a }'), overrides: [o] }).class,
      'destructive',
      'the URL reading reaches the override',
    );
  }
});

t.test('override path matching reads the path as GraphQL detection does', async (t) => {
  const LOOSEN: WireOverride = {
    match: { pathPattern: '/graphql', graphqlOperation: 'addStar' },
    wireClass: 'read',
  };
  const ADD_STAR = 'mutation { addStar(input: {starrableId: "x"}) { clientMutationId } }';
  t.equal(
    classify(send('POST', '/graphql', ADD_STAR, [LOOSEN])).class,
    'read',
    'the exact path gets the loosening',
  );
  for (const path of [
    '/GraphQL',
    '/graphql/',
    '/GraphQL/',
    '/graphql;x',
    '/graphql.json',
    '/graphql%20',
    '/graphql#x',
    '/x/../graphql',
    '/graphql/x',
  ]) {
    const c = classify(send('POST', path, ADD_STAR, [LOOSEN]));
    t.equal(c.class, 'write', `${path} gains no loosening`);
    const d = classify(send('POST', path, DELETE_REPO, [DESTRUCTIVE_AT_PATH]));
    t.equal(d.class, 'destructive', `${path} does not slip past the tightening`);
  }
  const other = classify(send('POST', '/api/graphql', DELETE_REPO, [DESTRUCTIVE_AT_PATH]));
  t.equal(other.class, 'write', 'another endpoint (/api/graphql) is not /graphql');
  // REST paths: the same readings for tightening
  const ARCHIVE: WireOverride = {
    match: { method: 'POST', pathPattern: '/repos/*/*/archive' },
    wireClass: 'destructive',
  };
  for (const path of [
    '/repos/a/b/archive.json',
    '/repos/a/b/ARCHIVE%20',
    '/repos/a/b/arch%2569ve',
    '/repos/a/b/archive#x',
    '/repos/a/b/archive;v=1',
  ]) {
    t.equal(
      classify({
        ...req('POST', path, { headers: { 'content-type': 'application/json' } }),
        overrides: [ARCHIVE],
      }).class,
      'destructive',
      `tightening sees ${path}`,
    );
  }
});
