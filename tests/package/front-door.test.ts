/**
 * The front door exports a host's API and nothing of the engine's insides: no CA helpers,
 * sandbox, credential planner or redaction lists at the root, and a Session only from
 * broker.openSession (the class is exported as a type; its constructor wants a key only the
 * broker holds).
 */
import t from 'tap';
import * as front from '../../src/index.js';

t.test('the root exports what a host needs', async (t) => {
  for (const name of [
    'createBroker',
    'createRunner',
    'createHost',
    'createLogger',
    'loadConfig',
    'openSqliteStore',
    'openStore',
    'defineExtension',
    'parseExtensionManifest',
    'runConformance',
    'mockVendor',
    'BrokerError',
    'isBrokerError',
    'EGRESS_CHANNEL',
  ])
    t.ok(name in front, `exports ${name}`);
});

t.test('and none of the internals', async (t) => {
  for (const name of [
    'Session',
    'createCertificateAuthority',
    'loadCertificateAuthority',
    'runSandboxed',
    'isolationUnavailable',
    'SANDBOX_LIMITS',
    'prepareCredentials',
    'TokenMinter',
    'CREDENTIAL_HEADERS',
    'REDACT_PATHS',
    'EGRESS_MSG',
  ])
    t.notOk(name in front, `does not export ${name}`);
});

t.test('a Session cannot be constructed from outside the broker', async (t) => {
  const broker = await front.createBroker();
  t.teardown(() => broker.close());
  const session = broker.openSession({ egress: ['api.github.com'] });
  t.teardown(() => session.close());
  const Ctor = session.constructor as new (...args: unknown[]) => unknown;
  t.throws(
    () =>
      new Ctor({ egress: ['api.github.com'] }, { port: 1, caCertPem: '', brokerLimits: {}, onClose() {} }),
    {
      name: 'TypeError',
      message: /broker\.openSession/,
    },
  );
  t.throws(
    () => new Ctor(Symbol('clibroker.session'), { egress: ['api.github.com'] }, {}),
    TypeError,
    'a look-alike key is not the key',
  );
});
