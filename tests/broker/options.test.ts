/**
 * The engine's options are checked where they enter: each bad option of createBroker and
 * openSession is refused with its catalogue code and the field's path, before a listener
 * starts or a session exists; the good ones still work.
 */
import t from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import type { BrokerOptions, SessionOptions } from '../../src/broker/types.js';
import { BrokerError } from '../../src/errors.js';

const brokerCases: Record<string, [opts: unknown, path: string]> = {
  'options not an object': [42, 'options'],
  'a CA without its key': [{ ca: { certPem: 'x' } }, 'ca.keyPem'],
  'upstream not an object': [{ upstream: 'https://proxy' }, 'upstream'],
  'upstream.ca a number': [{ upstream: { ca: 1 } }, 'upstream.ca'],
  'upstream.resolve not a function': [{ upstream: { resolve: { host: 'x' } } }, 'upstream.resolve'],
  'upstream.connections zero': [{ upstream: { connections: 0 } }, 'upstream.connections'],
  'an unknown limit': [{ limits: { maxRequest: 5 } }, 'limits.maxRequest'],
  'a negative limit': [{ limits: { maxBodyBytes: -1 } }, 'limits.maxBodyBytes'],
  'a fractional limit': [{ limits: { maxRequests: 1.5 } }, 'limits.maxRequests'],
  'a deadline above its ceiling': [{ limits: { deadlineMs: 999_999 } }, 'limits.deadlineMs'],
  'onAudit not a function': [{ onAudit: true }, 'onAudit'],
  'a port out of range': [{ port: 70_000 }, 'port'],
};

t.test('createBroker refuses each bad option with BROKER_OPTIONS_INVALID and its path', async (t) => {
  t.plan(Object.keys(brokerCases).length);
  for (const [name, [opts, path]] of Object.entries(brokerCases)) {
    await t.rejects(
      createBroker(opts as BrokerOptions),
      { code: 'BROKER_OPTIONS_INVALID', details: { path }, retry: false, side: 'caller' },
      name,
    );
  }
});

const sessionCases: Record<string, [opts: unknown, path: string]> = {
  'options not an object': [undefined, 'options'],
  'egress not an array': [{ egress: 'api.github.com' }, 'egress'],
  'an egress name with a wildcard': [{ egress: ['api.github.com', '*.github.com'] }, 'egress[1]'],
  'an egress IP address': [{ egress: ['10.0.0.1'] }, 'egress[0]'],
  'an egress entry not a string': [{ egress: [443] }, 'egress[0]'],
  "tier 'admin'": [{ egress: ['api.github.com'], tier: 'admin' }, 'tier'],
  'a deadline above 275 s': [
    { egress: ['api.github.com'], limits: { deadlineMs: 999_999 } },
    'limits.deadlineMs',
  ],
  'a request budget of zero': [
    { egress: ['api.github.com'], limits: { maxRequests: 0 } },
    'limits.maxRequests',
  ],
  'credentials without authorizationFor': [{ egress: ['api.github.com'], credentials: {} }, 'credentials'],
  'credentials.extraHosts with a bad name': [
    {
      egress: ['api.github.com'],
      credentials: { authorizationFor: () => undefined, extraHosts: ['Login.x.com'] },
    },
    'credentials.extraHosts[0]',
  ],
  'decide not a function': [{ egress: ['api.github.com'], decide: 'allow' }, 'decide'],
  'a label not a string': [{ egress: ['api.github.com'], labels: { runId: 7 } }, 'labels.runId'],
};

t.test('openSession refuses each bad option with SESSION_OPTIONS_INVALID and its path', async (t) => {
  t.plan(Object.keys(sessionCases).length + 2);
  const broker = await createBroker();
  t.teardown(() => broker.close());
  for (const [name, [opts, path]] of Object.entries(sessionCases)) {
    t.throws(
      () => broker.openSession(opts as SessionOptions),
      { code: 'SESSION_OPTIONS_INVALID', details: { path } },
      name,
    );
  }
  const s = broker.openSession({
    egress: ['api.github.com'],
    tier: 'write',
    limits: { deadlineMs: 275_000 },
  });
  t.equal(s.limits.deadlineMs, 275_000, 'the ceiling itself is accepted');
  s.close();
  const err = (() => {
    try {
      broker.openSession({ egress: ['api.github.com:443'] });
    } catch (e) {
      return e;
    }
  })();
  t.ok(err instanceof BrokerError && /egress\[0\]/.test(err.message), 'the message names the field');
});
