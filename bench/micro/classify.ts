/**
 * Micro-bench for classify's plain paths: the method table, a REST request with
 * overrides, a GraphQL GET; then each through a session's memo (ClassifyCache) with the
 * 64 overrides, as the engine classifies a request without a body.
 * Run: `npx tsx bench/micro/classify.ts`.
 */
import { ClassifyCache } from '../../src/policy/classify-cache.js';
import { classify, type ClassifyInput, type WireOverride } from '../../src/policy/index.js';
import { fmtNs, table, timeNs } from './timing.js';

const overrides: WireOverride[] = Array.from({ length: 64 }, (_, i) => ({
  match: { method: 'POST', pathPattern: `/repos/*/*/thing${i}/*` },
  wireClass: i % 2 ? 'read' : 'destructive',
}));
const cases: Record<string, ClassifyInput> = {
  'GET, method table': { method: 'GET', target: '/repos/acme/app/issues?per_page=100', headers: {} },
  'DELETE, method table': { method: 'DELETE', target: '/repos/acme/app', headers: {} },
  'GET, 64 overrides (none matches)': {
    method: 'GET',
    target: '/repos/acme/app/issues?per_page=100',
    headers: {},
    overrides,
  },
  'POST, 64 overrides (one matches)': {
    method: 'POST',
    target: '/repos/acme/app/thing33/x',
    headers: {},
    overrides,
  },
  'GET /graphql?query=mutation…': {
    method: 'GET',
    target: `/graphql?query=${encodeURIComponent('mutation { addStar(input:{starrableId:"x"}) { clientMutationId } }')}`,
    headers: {},
  },
};
// what a session with these overrides answers from memory for a request without a body (the
// GraphQL GET is never kept); a session without overrides classifies directly
const cache = new ClassifyCache(overrides);
for (const [name, input] of Object.entries(cases)) {
  if (input.overrides === overrides) cases[`${name}, session memo`] = input;
}
const results: Record<string, unknown>[] = [];
const rows: Record<string, string>[] = [];
for (const [name, input] of Object.entries(cases)) {
  const memo = name.endsWith('session memo');
  const ns = timeNs(() => (memo ? cache.classify(input) : classify(input)), 20_000, 15);
  const c = classify(input);
  rows.push({
    case: name,
    class: c.class,
    reason: c.reason,
    'per call': fmtNs(ns),
    'calls/s': Math.round(1e9 / ns).toLocaleString('en'),
  });
  results.push({ case: name, ns: Math.round(ns), class: c.class, reason: c.reason });
}
table(rows);
console.log(JSON.stringify({ bench: 'classify', node: process.version, results }));
