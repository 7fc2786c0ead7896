/**
 * Requests no class describes, refused by classify with a code: methods whose response
 * reflects the request (TRACE, TRACK), and `_method` override parameters in the query string
 * or a form body, in every spelling a server decodes to `_method`.
 */
import t from 'tap';
import { BrokerError, isBrokerError } from '../../src/errors.js';
import { type ClassifyInput, classify, needsBody, type WireOverride } from '../../src/policy/index.js';
import { gqlPost, req } from './fixtures/index.js';

function refusal(input: ClassifyInput): string | undefined {
  try {
    classify(input);
    return undefined;
  } catch (e) {
    if (isBrokerError(e)) return e.code;
    throw e;
  }
}

t.test(
  'TRACE, TRACK and their case variants are refused (405) whatever else the request carries',
  async (t) => {
    const loosen: WireOverride = { match: { method: 'TRACE' }, wireClass: 'read' };
    for (const method of ['TRACE', 'TRACK', 'trace', 'Trace', 'track']) {
      t.equal(refusal(req(method, '/')), 'CLI_TRACE_REFUSED', method);
      t.equal(
        refusal({ ...req(method, '/graphql'), overrides: [loosen] }),
        'CLI_TRACE_REFUSED',
        `${method} with a loosening override`,
      );
    }
    t.throws(
      () => classify(req('TRACE', '/')),
      { constructor: BrokerError, status: 405, message: /CLI_TRACE_REFUSED/ },
      'a BrokerError, 405, with the code in the message',
    );
    for (const method of ['GET', 'OPTIONS', 'PROPFIND', 'TRACER', 'XTRACE'])
      t.equal(refusal(req(method, '/')), undefined, `${method} is classified`);
  },
);

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const form = (
  text: string,
  headers: Record<string, string> = FORM,
  method = 'POST',
  target = '/repos/a/b',
): ClassifyInput => ({
  method,
  target,
  headers: { ...headers, 'content-length': String(Buffer.byteLength(text)) },
  body: Buffer.from(text),
});

// Parameter strings that some server reads as `_method=DELETE`.
const OVERRIDES = [
  '_method=DELETE',
  '_METHOD=DELETE',
  '_Method=delete',
  '%5Fmethod=DELETE',
  '%5fmethod=DELETE',
  '_%6Dethod=DELETE',
  '%255Fmethod=DELETE', // decoded twice
  '%u005Fmethod=DELETE',
  'a=1&_method=DELETE',
  'a=1;_method=DELETE', // Rack and older Python split on ;
  'a=1&%20_method=DELETE', // Rack drops spaces after a separator
  'a=1&+_method=DELETE',
  '.method=DELETE', // PHP turns . and space into _
  '[method=DELETE',
  '_method[]=DELETE',
  '_method[x]=DELETE',
  '_method%20=DELETE',
  '_method=GET&_method=DELETE', // repeated: servers differ on which wins
  '_method', // no value
  '_method=', // empty value
  '_method=POST', // even the method it already has: refused, one rule
  'x-http-method-override=DELETE',
  'X-HTTP-Method=DELETE',
  'x-method-override=DELETE',
];
const NOT_OVERRIDES = [
  'method=DELETE',
  'a_method=DELETE',
  'q=_method',
  '_methods=DELETE',
  '__method=DELETE',
  'my_method=1',
  'x=%5Fmethod',
];

t.test('a _method override in the query string is refused on every method, at any path', async (t) => {
  for (const p of OVERRIDES) {
    for (const method of ['POST', 'GET', 'PUT', 'DELETE']) {
      t.equal(refusal(req(method, `/repos/a/b?${p}`)), 'CLI_METHOD_OVERRIDE_REFUSED', `${method} ?${p}`);
    }
    t.equal(
      refusal(gqlPost({ query: '{ a }' }, `/graphql?${p}`)),
      'CLI_METHOD_OVERRIDE_REFUSED',
      `GraphQL POST ?${p}`,
    );
  }
  for (const p of NOT_OVERRIDES) t.equal(refusal(req('POST', `/x?${p}`)), undefined, `?${p} is no override`);
  // a server that does not treat # as a fragment sees the parameter after it
  t.equal(refusal(req('POST', '/x?a=1#&_method=DELETE')), 'CLI_METHOD_OVERRIDE_REFUSED', 'after a #');
  t.equal(refusal(req('POST', '/x#?_method=DELETE')), 'CLI_METHOD_OVERRIDE_REFUSED', 'a ? after a #');
});

t.test('a POST that a loosening override made read, carrying _method, is refused', async (t) => {
  const loosen: WireOverride = { match: { method: 'POST', pathPattern: '/search' }, wireClass: 'read' };
  t.equal(
    classify({ ...req('POST', '/search'), overrides: [loosen] }).class,
    'read',
    'without _method: read',
  );
  t.equal(
    refusal({ ...req('POST', '/search?_method=DELETE'), overrides: [loosen] }),
    'CLI_METHOD_OVERRIDE_REFUSED',
    'query string',
  );
  t.equal(
    refusal({ ...form('_method=DELETE', FORM, 'POST', '/search'), overrides: [loosen] }),
    'CLI_METHOD_OVERRIDE_REFUSED',
    'form body',
  );
});

t.test('a _method field in a form body is refused; the body is asked for', async (t) => {
  const types: Record<string, string>[] = [
    FORM,
    { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' },
    { 'content-type': 'APPLICATION/X-WWW-FORM-URLENCODED' },
    { 'content-type': 'application/x-www-form-urlencoded ;charset=iso-8859-1' },
    {}, // no content type: Rack parses a typeless body as a form
    { 'content-type': '' },
  ];
  for (const headers of types) {
    t.equal(
      needsBody({ method: 'POST', target: '/x', headers }),
      true,
      `needsBody: ${JSON.stringify(headers)}`,
    );
    const typeless = headers['content-type'] === undefined || headers['content-type'] === '';
    for (const p of OVERRIDES) {
      for (const method of typeless ? ['POST', 'post'] : ['POST', 'PUT', 'PATCH']) {
        t.equal(
          refusal(form(p, headers, method)),
          'CLI_METHOD_OVERRIDE_REFUSED',
          `${method} ${JSON.stringify(headers)} ${p}`,
        );
      }
    }
    for (const p of NOT_OVERRIDES) t.equal(refusal(form(p, headers)), undefined, `${p} is no override`);
  }
  t.equal(
    refusal(form(`${'a=1&'.repeat(100_000)}_method=DELETE`)),
    'CLI_METHOD_OVERRIDE_REFUSED',
    'far into a large body',
  );
  t.equal(
    refusal(form('_method=DELETE', { 'content-type': 'application/json' })),
    undefined,
    'a JSON body is not a form',
  );
  t.equal(
    needsBody({ method: 'POST', target: '/x', headers: { 'content-type': 'application/json' } }),
    false,
    'JSON keeps streaming',
  );
  t.equal(
    needsBody({ method: 'PUT', target: '/upload', headers: {} }),
    false,
    'a typeless PUT upload keeps streaming',
  );
  t.equal(
    refusal(form('_method=DELETE', {}, 'PUT')),
    undefined,
    'no server reads a typeless PUT body as a form',
  );
});

t.test('a form body that cannot be checked is refused', async (t) => {
  t.equal(
    refusal(form('xxxx', { ...FORM, 'content-encoding': 'gzip' })),
    'CLI_METHOD_OVERRIDE_REFUSED',
    'gzip',
  );
  t.equal(refusal(form('xxxx', { ...FORM, 'content-encoding': 'br' })), 'CLI_METHOD_OVERRIDE_REFUSED', 'br');
  t.equal(refusal(form('a=1', { ...FORM, 'content-encoding': 'identity' })), undefined, 'identity is fine');
  t.equal(
    refusal(form('x', { 'content-type': 'application/x-www-form-urlencoded; charset=utf-16' })),
    'CLI_METHOD_OVERRIDE_REFUSED',
    'UTF-16',
  );
  t.equal(
    refusal(form('a=1', { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' })),
    undefined,
    'UTF-8 is fine',
  );
});

t.test('a large form is checked in one pass', async (t) => {
  // a million fields, each with an escape, and the override last: no array of fields, no quadratic scan
  t.equal(
    refusal(form(`${'a%20=1;'.repeat(1_000_000)}_method=DELETE`)),
    'CLI_METHOD_OVERRIDE_REFUSED',
    'short fields',
  );
  t.equal(
    refusal(form(`${'abcdefgh%20=1;'.repeat(500_000)}_%6Dethod=DELETE`)),
    'CLI_METHOD_OVERRIDE_REFUSED',
    'long escaped fields',
  );
  t.equal(refusal(form('method%20=1&x=%5F&y=_method')), undefined, 'values never count');
});
