/**
 * The classify memo answers exactly what classify answers: never across a method, a target
 * spelled differently, an override set, or a request whose head or body classify reads, and
 * it never holds more than its bound.
 */
import t from 'tap';
import { ClassifyCache } from '../../src/policy/classify-cache.js';
import { classify, type ClassifyInput, type WireOverride } from '../../src/policy/index.js';

const OVERRIDES: readonly WireOverride[] = Object.freeze([
  { match: { method: 'DELETE', pathPattern: '/repos/*/app/cache' }, wireClass: 'read' },
  { match: { method: 'POST', pathPattern: '/repos/*/*/issues/search' }, wireClass: 'read' },
  { match: { method: 'POST', pathPattern: '/api', graphqlOperation: 'addStar' }, wireClass: 'read' },
]);
const head = (method: string, target: string, headers: Record<string, string> = {}): ClassifyInput => ({
  method,
  target,
  headers,
  overrides: OVERRIDES,
});
/** What classify itself says, with its class, reason and applied overrides. */
const fresh = (input: ClassifyInput) => {
  const c = classify(input);
  return { class: c.class, reason: c.reason, overridesApplied: [...c.overridesApplied] };
};
const seen = (cache: ClassifyCache, input: ClassifyInput) => {
  const c = cache.classify(input);
  return { class: c.class, reason: c.reason, overridesApplied: [...c.overridesApplied] };
};

t.test('every request reads as classify reads it, in any order, repeated', (t) => {
  const inputs: ClassifyInput[] = [
    head('GET', '/repos/acme/app/cache'),
    head('DELETE', '/repos/acme/app/cache'),
    head('delete', '/repos/acme/app/cache'),
    head('DELETE', '/repos/acme/app/cache/'),
    head('DELETE', '/repos/acme/app/%63ache'),
    head('DELETE', '/repos/acme/app/cache?x=1'),
    head('DELETE', '/repos/acme/app/cache#frag'),
    head('DELETE', '/repos/acme/other/cache'),
    head('POST', '/repos/acme/app/issues/search'),
    head('POST', '/repos/acme/app/issues/search', { 'content-length': '0' }),
    head('GET', '/graphql?query=%7Bviewer%7Blogin%7D%7D'),
    head('GET', '/graphql?query=mutation%7BaddStar%7D'),
    head('POST', '/api'),
    head('POST', '/api', { 'content-type': 'application/json' }),
    head('PATCH', '/repos/acme/app'),
    head('GET', '/repos/acme/app', { 'content-length': '5' }),
    head('GET', '/repos/acme/app', { 'transfer-encoding': 'chunked' }),
    { ...head('DELETE', '/repos/acme/app/cache'), overrides: [] },
    { ...head('DELETE', '/repos/acme/app/cache'), overrides: undefined },
    {
      ...head('POST', '/x', { 'content-type': 'application/x-www-form-urlencoded' }),
      body: Buffer.from('a=1'),
    },
  ];
  const cache = new ClassifyCache(OVERRIDES);
  const order = [...inputs, ...[...inputs].reverse(), ...inputs];
  t.plan(order.length);
  for (const input of order)
    t.same(
      seen(cache, input),
      fresh(input),
      `${input.method} ${input.target} ${JSON.stringify(input.headers)} overrides=${input.overrides?.length}`,
    );
});

t.test('a hit never crosses the method, the target as sent, or the override set', (t) => {
  const cache = new ClassifyCache(OVERRIDES);
  const search = '/repos/acme/app/issues/search';
  t.equal(cache.classify(head('POST', search)).class, 'read', 'the override loosens it');
  t.equal(cache.classify(head('POST', search)).class, 'read', 'and again, from memory');
  t.equal(cache.classify(head('PUT', search)).class, 'write', 'another method');
  t.equal(cache.classify(head('POST', `${search}es`)).class, 'write', 'another target');
  t.equal(
    cache.classify({ ...head('POST', search), overrides: [] }).class,
    'write',
    'another override set is classified with its own',
  );
  t.end();
});

t.test('a head whose reading depends on more than method and target is never answered from memory', (t) => {
  const cache = new ClassifyCache(OVERRIDES);
  // a GraphQL GET without a body reads as its query says; the same with a declared body it
  // cannot see is unparsed (at least write)
  const plain = head('GET', '/graphql?query=%7Bviewer%7Blogin%7D%7D');
  t.equal(cache.classify(plain).class, 'read');
  t.equal(cache.classify({ ...plain, headers: { 'content-length': '12' } }).class, 'write');
  t.equal(cache.classify({ ...plain, headers: { 'transfer-encoding': 'chunked' } }).class, 'write');
  t.equal(cache.classify(plain).class, 'read');
  // the same for a path an override declares a GraphQL endpoint
  const declared = head('GET', '/api?query=%7Bviewer%7Blogin%7D%7D');
  t.equal(cache.classify(declared).class, 'read');
  t.equal(cache.classify({ ...declared, headers: { 'content-length': '12' } }).class, 'write');
  // a body read whole is read every time: one form body carries a `_method` field
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  t.equal(cache.classify({ ...head('POST', '/x', form), body: Buffer.from('a=1') }).class, 'write');
  t.throws(() => cache.classify({ ...head('POST', '/x', form), body: Buffer.from('_method=DELETE') }), {
    code: 'CLI_METHOD_OVERRIDE_REFUSED',
  });
  t.end();
});

t.test('the memo is bounded', (t) => {
  const cache = new ClassifyCache(OVERRIDES, 16);
  for (let i = 0; i < 100; i++) cache.classify(head('GET', `/repos/acme/app/${i}`));
  t.equal(cache.size, 16, 'the oldest entries went');
  t.equal(cache.classify(head('GET', '/repos/acme/app/0')).class, 'read', 'a dropped key classifies afresh');
  const fresh16 = new ClassifyCache(OVERRIDES, 16);
  const long = head('GET', `/${'a'.repeat(5000)}`);
  fresh16.classify(long);
  t.equal(fresh16.classify(long).reason, 'method-read');
  t.equal(fresh16.size, 0, 'a very long target is not kept');
  t.end();
});

t.test('refusals are never remembered: each TRACE and `_method` parameter is refused again', (t) => {
  const cache = new ClassifyCache(OVERRIDES);
  for (let i = 0; i < 2; i++) {
    t.throws(() => cache.classify(head('TRACE', '/x')), { code: 'CLI_TRACE_REFUSED' });
    t.throws(() => cache.classify(head('POST', '/x?_method=DELETE')), {
      code: 'CLI_METHOD_OVERRIDE_REFUSED',
    });
  }
  t.equal(cache.size, 0);
  t.end();
});

t.test('an answer from memory cannot be changed by whoever holds it', (t) => {
  const cache = new ClassifyCache(OVERRIDES);
  cache.classify(head('GET', '/x'));
  const c = cache.classify(head('GET', '/x'));
  t.throws(() => {
    (c as { class: string }).class = 'destructive';
  }, TypeError);
  t.equal(cache.classify(head('GET', '/x')).class, 'read');
  t.end();
});
