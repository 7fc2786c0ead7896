/**
 * A call's audit volume is bounded end to end: real curl through the runner asks for far more
 * than the request budget, and the store keeps every forwarded request's event, a few
 * refusals one by one and one summary with the exact count of the rest.
 */
import t from 'tap';
import { FOLD_PER_CODE } from '../../src/broker/fold.js';
import type { AuditEvent } from '../../src/broker/types.js';
import { runFixture } from './fixtures.js';

t.test(
  'curl asking for 300 URLs over a budget of 128: the stored events are bounded, the call is refused with the budget code',
  async (t) => {
    const f = await runFixture(t);
    const urls = 300;
    const r = await f.runner.run(f.input('curl', ['-sS', `https://api.github.com/x[1-${urls}]`]));
    t.equal(r.status, 'refused', r.stderr.slice(0, 500));
    if (r.status === 'refused') t.equal(r.refusal.code, 'CLI_REQUEST_BUDGET_EXCEEDED');
    t.equal(r.refusals[0]!.code, 'CLI_REQUEST_BUDGET_EXCEEDED');
    t.equal(r.refusals[0]!.path, '/x129', 'the first refusal is the request that crossed the budget');
    t.equal(r.requests, urls, 'every request the child sent is counted, folded ones too');
    t.equal(f.vendor.log.length, 128, 'the budget reached the vendor, nothing more');

    const stored = (await f.store.listEvents({ limit: 10_000 }))
      .map((e) => e.event as AuditEvent)
      .filter((e) => e.type === 'egress.allowed' || e.type === 'egress.blocked');
    const allowed = stored.filter((e) => e.type === 'egress.allowed');
    const one = stored.filter((e) => e.type === 'egress.blocked' && e.folded === undefined);
    const summaries = stored.filter((e) => e.folded !== undefined);
    t.equal(allowed.length, 128, 'every forwarded request keeps its own event');
    t.equal(one.length, FOLD_PER_CODE, `${FOLD_PER_CODE} refusals one by one`);
    t.equal(summaries.length, 1, 'one summary');
    t.match(summaries[0], { code: 'CLI_REQUEST_BUDGET_EXCEEDED', folded: urls - 128 - FOLD_PER_CODE });
    t.equal(stored.length, 128 + FOLD_PER_CODE + 1, `${stored.length} events stored for ${urls} requests`);
    t.equal(r.refusals.length, FOLD_PER_CODE + 1, 'the summary counts once in the refusals');
    t.equal(r.refusals.at(-1)!.folded, urls - 128 - FOLD_PER_CODE, 'with its folded count');
  },
);
