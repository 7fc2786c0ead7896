/**
 * Micro-bench for the redaction every audit event pays (src/audit/redact.ts): the request's
 * path and host redacted afresh, against a session's memo of them (RedactMemo), for the paths
 * a CLI repeats. Run: `npx tsx bench/micro/audit-redact.ts`.
 */
import { RedactMemo, redactHost, redactPath } from '../../src/audit/redact.js';
import { fmtNs, table, timeNs } from './timing.js';

const cases: Record<string, { target: string; host: string }> = {
  'gh issue list': { target: '/repos/acme/app/issues?per_page=100', host: 'api.github.com' },
  'gh pr comments': { target: '/repos/cli/cli/pulls/1234/comments', host: 'api.github.com' },
  'az resource groups': {
    target: '/subscriptions/0b6a1f1e-8c1d-4c84-9d1e-0f7a5c3b2a10/resourceGroups?api-version=2021-04-01',
    host: 'management.azure.com',
  },
};
const memo = new RedactMemo();
const rows: Record<string, string>[] = [];
const results: Record<string, unknown>[] = [];
for (const [name, { target, host }] of Object.entries(cases)) {
  const fresh = timeNs(() => [redactPath(target), redactHost(host)], 20_000, 15);
  const held = timeNs(() => [memo.path(target), memo.host(host)], 20_000, 15);
  rows.push({ case: name, path: memo.path(target), afresh: fmtNs(fresh), 'session memo': fmtNs(held) });
  results.push({ case: name, freshNs: Math.round(fresh), memoNs: Math.round(held) });
}
table(rows);
console.log(JSON.stringify({ bench: 'audit-redact', node: process.version, results }));
