import t from 'tap';
import { errorFromThrown, failure, proseLine } from '../../src/cli/envelope.js';
import { BrokerError } from '../../src/errors.js';

const SECRET = 'ghp_0123456789abcdefABCDEF0123456789abcd';

t.test(
  "a BrokerError's code and details are fields of the envelope, the policy code among them",
  async (t) => {
    const env = failure(
      errorFromThrown(
        new BrokerError('POLICY_BLOCKED', {
          policyCode: 'CLI_REQUEST_TIER_DENIED',
          details: { method: 'POST' },
        }),
      ),
    );
    t.match(env, {
      success: false,
      error: {
        type: 'runtime',
        code: 'POLICY_BLOCKED',
        details: { method: 'POST', policyCode: 'CLI_REQUEST_TIER_DENIED' },
      },
    });
    const plain = failure(errorFromThrown(new Error('x')));
    t.match(
      plain,
      { error: { type: 'runtime', code: 'INTERNAL_ERROR', message: 'x' } },
      'an uncoded error is INTERNAL_ERROR',
    );
  },
);

t.test('details are redacted and capped like every field', async (t) => {
  const env = failure(
    errorFromThrown(
      new BrokerError('INVALID_TOOL_INPUT', {
        details: {
          got: `token ${SECRET}`,
          long: 'x'.repeat(5000),
          deep: { a: { b: { c: { d: { e: 'too deep' } } } } },
          list: Array.from({ length: 100 }, (_, i) => i),
        },
      }),
    ),
  );
  const text = JSON.stringify(env);
  t.notMatch(text, SECRET, 'the secret-shaped value is redacted');
  t.match(text, /\[REDACTED\]/);
  t.notMatch(text, 'x'.repeat(300), 'a long string is cut');
  t.notMatch(text, 'too deep', 'at most four levels');
  t.equal(
    ((env.success ? undefined : env.error.details?.['list']) as unknown[] | undefined)?.length,
    32,
    'at most 32 entries',
  );
  const huge = failure(
    errorFromThrown(
      new BrokerError('INVALID_TOOL_INPUT', {
        details: Object.fromEntries(
          Array.from({ length: 32 }, (_, i) => [`k${i}`, ['y'.repeat(200), 'z'.repeat(200)]]),
        ),
      }),
    ),
  );
  t.notOk(huge.success === false && huge.error.details, 'details over 8 KiB as JSON are left out');
  t.notMatch(proseLine('clibroker', env.success ? { type: 'runtime', message: '' } : env.error), SECRET);
});
