import t from 'tap';
import {
  type ClassifyInput,
  classify,
  pathPatternProblem,
  type WireOverride,
  wireOverrideSchema,
} from '../../src/policy/index.js';
import { GH_ADD_STAR, GH_ISSUE_LIST, gqlPost, req } from './fixtures/index.js';

const O = (match: WireOverride['match'], wireClass: WireOverride['wireClass']): WireOverride => ({
  match,
  wireClass,
});
const with_ = (input: ClassifyInput, overrides: WireOverride[]): ClassifyInput => ({ ...input, overrides });

const STAR_READ = O({ graphqlOperation: 'addStar' }, 'read');
const ISSUES_READ = O({ method: 'POST', pathPattern: '/repos/*/*/issues/search' }, 'read');
const ARCHIVE_DESTRUCTIVE = O({ method: 'POST', pathPattern: '/repos/*/*/archive' }, 'destructive');

const cases: Record<string, [ClassifyInput, class_: string, reason: string, applied: number[]]> = {
  'a loosening path override applies on an exact path': [
    with_(req('POST', '/repos/acme/app/issues/search'), [ISSUES_READ]),
    'read',
    'override-loosen',
    [0],
  ],
  'percent-encoded letters decode before matching': [
    with_(req('POST', '/repos/acme/app/%69ssues/search'), [ISSUES_READ]),
    'read',
    'override-loosen',
    [0],
  ],
  'the query string is not part of the path': [
    with_(req('POST', '/repos/acme/app/issues/search?x=/y'), [ISSUES_READ]),
    'read',
    'override-loosen',
    [0],
  ],
  '* does not match an empty segment': [
    with_(req('POST', '/repos//app/issues/search'), [ISSUES_READ]),
    'write',
    'method-write',
    [],
  ],
  '* matches one segment, not two': [
    with_(req('POST', '/repos/a/b/c/issues/search'), [ISSUES_READ]),
    'write',
    'method-write',
    [],
  ],
  'a dot-segment never matches a loosening override': [
    with_(req('POST', '/repos/acme/app/x/../issues/search'), [ISSUES_READ]),
    'write',
    'method-write',
    [],
  ],
  'an encoded dot-segment never matches': [
    with_(req('POST', '/repos/acme/%2e%2e/app/issues/search'), [
      O({ pathPattern: '/repos/*/*/app/issues/search' }, 'read'),
    ]),
    'write',
    'method-write',
    [],
  ],
  'an encoded slash never matches (%2F)': [
    with_(req('POST', '/repos/acme%2Fx/app/issues/search'), [ISSUES_READ]),
    'write',
    'method-write',
    [],
  ],
  'an encoded backslash never matches (%5C)': [
    with_(req('POST', '/repos/acme%5cx/app/issues/search'), [ISSUES_READ]),
    'write',
    'method-write',
    [],
  ],
  // a server behind a decoding proxy decodes twice: %252E%252E%252F is ../ to it
  'a double-encoded dot-segment and slash never match': [
    with_(req('POST', '/repos/%252E%252E%252Fx/app/issues/search'), [ISSUES_READ]),
    'write',
    'method-write',
    [],
  ],
  'a double-encoded slash never matches': [
    with_(req('POST', '/repos/acme%252Fx/app/issues/search'), [ISSUES_READ]),
    'write',
    'method-write',
    [],
  ],
  // IIS trims trailing spaces and dots from a segment: `.. ` is `..` to it
  'a dot-segment with a trailing space never matches': [
    with_(req('POST', '/repos/acme/..%20/x/issues/search'), [
      O({ pathPattern: '/repos/*/*/*/issues/search' }, 'read'),
    ]),
    'write',
    'method-write',
    [],
  ],
  'a segment of dots and spaces never matches': [
    with_(req('POST', '/repos/acme/%20.%20/x/issues/search'), [
      O({ pathPattern: '/repos/*/*/*/issues/search' }, 'read'),
    ]),
    'write',
    'method-write',
    [],
  ],
  'a raw backslash never matches': [
    with_(req('POST', '/repos/acme\\x/app/issues/search'), [ISSUES_READ]),
    'write',
    'method-write',
    [],
  ],
  'a trailing slash (empty segment) never matches': [
    with_(req('POST', '/repos/acme/app/issues/search/'), [
      O({ pathPattern: '/repos/acme/app/issues/search/*' }, 'read'),
    ]),
    'write',
    'method-write',
    [],
  ],
  'loosening compares the path case-sensitively': [
    with_(req('POST', '/Repos/acme/app/issues/search'), [ISSUES_READ]),
    'write',
    'method-write',
    [],
  ],
  'loosening compares the method exactly': [
    with_(req('post', '/repos/acme/app/issues/search'), [ISSUES_READ]),
    'write',
    'method-other',
    [],
  ],
  'a tightening override applies': [
    with_(req('POST', '/repos/acme/app/archive'), [ARCHIVE_DESTRUCTIVE]),
    'destructive',
    'override-tighten',
    [0],
  ],
  'a tightening override sees through dot-segments': [
    with_(req('POST', '/repos/acme/x/../app/archive'), [ARCHIVE_DESTRUCTIVE]),
    'destructive',
    'override-tighten',
    [0],
  ],
  'a tightening override sees through %2F, case and ;params': [
    with_(req('POST', '/REPOS/acme%2Fapp/archive;v=1'), [ARCHIVE_DESTRUCTIVE]),
    'destructive',
    'override-tighten',
    [0],
  ],
  'a tightening override sees through empty segments': [
    with_(req('POST', '//repos//acme/app/archive/'), [ARCHIVE_DESTRUCTIVE]),
    'destructive',
    'override-tighten',
    [0],
  ],
  'the highest matching tightening wins': [
    with_(req('GET', '/x'), [
      O({ pathPattern: '/x' }, 'write'),
      O({ method: 'GET' }, 'destructive'),
      O({ pathPattern: '/*' }, 'write'),
    ]),
    'destructive',
    'override-tighten',
    [1],
  ],
  'a tightening beats a loosening': [
    with_(req('POST', '/repos/acme/app/issues/search'), [
      ISSUES_READ,
      O({ pathPattern: '/repos/*/*/issues/*' }, 'destructive'),
    ]),
    'destructive',
    'override-tighten',
    [1],
  ],
  'an override naming the current class keeps it and blocks loosening': [
    with_(req('POST', '/repos/acme/app/issues/search'), [
      ISSUES_READ,
      O({ pathPattern: '/repos/*/*/issues/*' }, 'write'),
    ]),
    'write',
    'override-keep',
    [1],
  ],
  'loosening never applies to a destructive request': [
    with_(req('DELETE', '/repos/acme/app'), [O({ method: 'DELETE' }, 'write')]),
    'destructive',
    'method-destructive',
    [],
  ],
  'loosening a destructive request to read does not apply either': [
    with_(req('DELETE', '/x'), [O({ pathPattern: '/x' }, 'read')]),
    'destructive',
    'method-destructive',
    [],
  ],
  'several equal loosenings on a write: the first one is reported': [
    with_(req('PUT', '/a/b'), [O({ pathPattern: '/a/*' }, 'read'), O({ method: 'PUT' }, 'read')]),
    'read',
    'override-loosen',
    [0],
  ],
  'GraphQL: loosening applies when every root field matches': [
    with_(gqlPost({ query: GH_ADD_STAR }), [STAR_READ]),
    'read',
    'override-loosen',
    [0],
  ],
  'GraphQL: loosening does not apply when one root field differs': [
    with_(gqlPost({ query: 'mutation { addStar(input:{}) { x } deleteRepository(input:{}) { x } }' }), [
      STAR_READ,
    ]),
    'write',
    'graphql-mutation',
    [],
  ],
  'GraphQL: loosening never applies to an unparsed body': [
    with_(gqlPost('{"query": "mutation { addStar }'), [STAR_READ, O({ pathPattern: '/graphql' }, 'read')]),
    'write',
    'graphql-unparsed',
    [],
  ],
  'GraphQL: tightening applies when any root field matches': [
    with_(gqlPost({ query: 'mutation { addStar(input:{}) { x } deleteRepository(input:{}) { x } }' }), [
      O({ graphqlOperation: 'deleteRepository' }, 'destructive'),
    ]),
    'destructive',
    'override-tighten',
    [0],
  ],
  'GraphQL: a tightening by root field applies to an unparsed body (its fields are unknown)': [
    with_(
      gqlPost({ query: `mutation { deleteRepository(input:{}) { x } a(x: [${'1 '.repeat(1_000_001)}]) }` }),
      [O({ graphqlOperation: 'deleteRepository' }, 'destructive')],
    ),
    'destructive',
    'override-tighten',
    [0],
  ],
  'GraphQL: a query root field can be tightened': [
    with_(gqlPost({ query: GH_ISSUE_LIST }), [O({ graphqlOperation: 'repository' }, 'write')]),
    'write',
    'override-tighten',
    [0],
  ],
  'GraphQL: an operation-name override does not match a root field of another name': [
    with_(gqlPost({ query: 'mutation AddStar { addStar { x } }' }), [
      O({ graphqlOperation: 'AddStar' }, 'read'),
    ]),
    'write',
    'graphql-mutation',
    [],
  ],
  'a graphqlOperation override never matches a REST request': [
    with_(req('POST', '/addStar'), [STAR_READ]),
    'write',
    'method-write',
    [],
  ],
  'an override constraining nothing is ignored': [
    with_(req('POST', '/x'), [O({}, 'read')]),
    'write',
    'method-write',
    [],
  ],
  'a malformed override is ignored': [
    with_(req('POST', '/x'), [
      { match: { pathPattern: 'x' }, wireClass: 'read' } as WireOverride,
      { wireClass: 'read' } as WireOverride,
    ]),
    'write',
    'method-write',
    [],
  ],
};

t.test('overrides', async (t) => {
  t.plan(Object.keys(cases).length);
  for (const [name, [input, cls, reason, applied]] of Object.entries(cases)) {
    const c = classify(input);
    t.same(
      { class: c.class, reason: c.reason, applied: c.overridesApplied },
      { class: cls, reason, applied },
      name,
    );
  }
});

t.test('baseClass and baseReason keep the pre-override answer', async (t) => {
  const c = classify(with_(gqlPost({ query: GH_ADD_STAR }), [STAR_READ]));
  t.same([c.class, c.baseClass, c.baseReason], ['read', 'write', 'graphql-mutation']);
});

t.test('the override schema', async (t) => {
  const ok: unknown[] = [
    { match: { method: 'POST', pathPattern: '/repos/*/*/issues' }, wireClass: 'read' },
    { match: { graphqlOperation: 'addStar' }, wireClass: 'write' },
  ];
  const bad: Record<string, unknown> = {
    'lower-case method': { match: { method: 'post' }, wireClass: 'read' },
    'relative pattern': { match: { pathPattern: 'repos/*' }, wireClass: 'read' },
    'dot-segment in pattern': { match: { pathPattern: '/repos/../x' }, wireClass: 'read' },
    'partial wildcard': { match: { pathPattern: '/repos/a*' }, wireClass: 'read' },
    'percent in pattern': { match: { pathPattern: '/repos/%2F' }, wireClass: 'read' },
    'empty segment in pattern': { match: { pathPattern: '/repos//x' }, wireClass: 'read' },
    'graphqlOperation not a name': { match: { graphqlOperation: 'add Star' }, wireClass: 'read' },
    'unknown class': { match: { method: 'GET' }, wireClass: 'admin' },
    'unknown key': { match: { host: 'x' }, wireClass: 'read' },
  };
  t.plan(ok.length + Object.keys(bad).length + 2);
  t.equal(
    wireOverrideSchema().safeParse(bad['dot-segment in pattern']).error?.issues[0]?.message,
    'no . or .. segment',
    'the refusal says why',
  );
  for (const o of ok) t.ok(wireOverrideSchema().safeParse(o).success, JSON.stringify(o));
  for (const [name, o] of Object.entries(bad)) t.notOk(wireOverrideSchema().safeParse(o).success, name);
  t.equal(pathPatternProblem('/a/*/c'), undefined);
});
