import { readFileSync } from 'node:fs';
import t from 'tap';
import { renderErrorsDoc } from '../scripts/errors-doc.js';
import { BrokerError, CATALOGUE, REASON_PHRASES } from '../src/errors.js';

t.test('docs/errors.md is generated from the catalogue', async (t) => {
  const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
  t.equal(doc, renderErrorsDoc(), 'run `npm run docs:errors` after changing src/errors.ts');
});

t.test(
  'every status the child can see has a standard reason phrase and is never 5xx for a refusal',
  async (t) => {
    for (const [code, s] of Object.entries(CATALOGUE)) {
      if (s.status === undefined) continue;
      t.ok(REASON_PHRASES[s.status], `${code} ${s.status} has a reason phrase`);
      if (s.side === 'policy' || s.side === 'child') t.ok(s.status < 500, `${code} is a 4xx refusal`);
    }
  },
);

t.test('BrokerError carries code, status and policy code', async (t) => {
  const e = new BrokerError('POLICY_BLOCKED', { policyCode: 'CLI_REQUEST_TIER_DENIED' });
  t.equal(e.status, 422);
  t.match(e.message, /CLI_REQUEST_TIER_DENIED/);
  t.same(e.toJSON().policyCode, 'CLI_REQUEST_TIER_DENIED');
});
