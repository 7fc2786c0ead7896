/**
 * Log lines never carry anything secret-shaped: the broker builds them in one place
 * (audit/logger.ts brokerLog), which removes userinfo, redacts secret shapes, caps strings
 * and never logs the text of an uncoded error (a credential stamper's own exception).
 */
import t, { type Test } from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import { MAX_LOGGED_STRING } from '../../src/audit/logger.js';
import { brokerFixture, exchange, openTunnel, proxyAuth, rawConnect, until } from '../helpers/broker.js';
import { leakGuard, proxySecret } from '../helpers/leaks.js';
import { startUpstream } from '../helpers/upstream.js';

const HOST = 'api.example.com';
const SECRET = 'hunter2hunter2'; // low entropy: only the structure (userinfo) gives it away
const TOKEN = 'ghp_0123456789abcdefABCDEF0123456789abcd';

async function setup(t: Test) {
  const { broker, guard, events } = await brokerFixture(t, {
    hosts: [HOST],
    secrets: [SECRET, TOKEN, 'stamper-private-detail'],
  });
  return { broker, guard, events };
}

t.test('the 407 warning never logs the userinfo of a CONNECT target, and caps it', async (t) => {
  const { broker, guard } = await setup(t);
  const a = await rawConnect(
    broker.port,
    `CONNECT id:${SECRET}@${HOST}:443 HTTP/1.1\r\nHost: ${HOST}:443\r\n\r\n`,
  );
  t.match(a.head, /^HTTP\/1\.1 407/);
  a.socket.destroy();
  const long = await rawConnect(
    broker.port,
    `CONNECT ${'a'.repeat(5000)}${TOKEN}.example.com:443 HTTP/1.1\r\n\r\n`,
  );
  long.socket.destroy();
  t.ok(await until(() => guard.text.split('\n').filter((l) => l.includes('(407)')).length === 2));
  t.notMatch(guard.text, SECRET);
  t.match(guard.text, /\[REDACTED\]@api\.example\.com:443/, 'the host part stays readable');
  const lines = guard.text.split('\n').filter((l) => l.includes('(407)'));
  t.ok(
    lines.every((l) => l.length < MAX_LOGGED_STRING + 200),
    'a 5 KB target is cut',
  );
});

t.test(
  'an authenticated CONNECT to user:secret@host is refused and audited without the secret',
  async (t) => {
    const { broker, guard, events } = await setup(t);
    const s = broker.openSession({ egress: [HOST] });
    guard.watch(proxySecret(s.proxyUrl));
    const r = await rawConnect(
      broker.port,
      `CONNECT user:${SECRET}@${HOST}:443 HTTP/1.1\r\nProxy-Authorization: ${proxyAuth(s.proxyUrl)}\r\n\r\n`,
    );
    t.match(r.head, /^HTTP\/1\.1 4\d\d/);
    r.socket.destroy();
    t.ok(await until(() => events.length === 1));
    t.match(events[0], { code: 'CLI_HOST_INVALID', method: 'CONNECT' });
    t.notMatch(JSON.stringify(events[0]), SECRET);
  },
);

t.test("a credential stamper's thrown error is never logged or audited verbatim", async (t) => {
  const { broker, guard, events } = await setup(t);
  const s = broker.openSession({
    egress: [HOST],
    credentials: {
      authorizationFor: () => {
        throw new Error(`mint failed: client_secret=${SECRET} token=${TOKEN} stamper-private-detail`);
      },
    },
  });
  guard.watch(proxySecret(s.proxyUrl));
  const tls = await openTunnel(s, broker.port, HOST);
  const out = await exchange(tls, `GET /x HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`, (o) => /\}$/.test(o));
  tls.destroy();
  t.match(out, /INTERNAL_ERROR/);
  t.notMatch(out, /stamper-private-detail/, 'not echoed to the child either');
  t.ok(await until(() => events.length === 1));
  t.match(events[0], { type: 'egress.blocked', code: 'INTERNAL_ERROR', class: 'read' });
  t.match(guard.text, /unexpected failure in the request pipeline/, 'the failure is logged');
  t.notMatch(guard.text, /stamper-private-detail/);
});

t.test("a stamper's coded refusal is audited with its message redacted", async (t) => {
  const { broker, events } = await setup(t);
  const { BrokerError } = await import('../../src/errors.js');
  const s = broker.openSession({
    egress: [HOST],
    credentials: {
      authorizationFor: () => {
        throw new BrokerError('CREDENTIAL_TOKEN_MINT_FAILED', {
          message: `CREDENTIAL_TOKEN_MINT_FAILED: the provider echoed ${TOKEN}`,
        });
      },
    },
  });
  const tls = await openTunnel(s, broker.port, HOST);
  await exchange(tls, `GET /x HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`, (o) => /\}$/.test(o));
  tls.destroy();
  t.ok(await until(() => events.length === 1));
  // the secret-shaped word is replaced (by the log redactor's marker, or the host-label one
  // that runs first on a refusal's message), never kept
  t.match(events[0], {
    code: 'CREDENTIAL_TOKEN_MINT_FAILED',
    reason: /the provider echoed (\[REDACTED\]|\{redacted\})/,
  });
  t.notMatch(String(events[0]?.reason), TOKEN, 'the token is not in the event');
});

t.test("a host's audit sink that throws is reported without its error's text", async (t) => {
  const upstream = await startUpstream([HOST]);
  const guard = leakGuard(['sink-private-detail']);
  const broker = await createBroker({
    upstream: { ca: upstream.pki.caPem, resolve: upstream.resolve, allowAddresses: ['127.0.0.0/8'] },
    logger: guard.logger,
    onAudit: () => {
      throw new Error('sink-private-detail');
    },
  });
  t.teardown(async () => {
    await broker.close();
    await upstream.close();
    guard.assertClean();
  });
  const s = broker.openSession({ egress: [HOST] });
  guard.watch(proxySecret(s.proxyUrl));
  const tls = await openTunnel(s, broker.port, HOST);
  const out = await exchange(tls, `GET /x HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`, (o) => o.endsWith('}'));
  tls.destroy();
  t.match(out, /^HTTP\/1\.1 200/, 'the data path is not taken down');
  t.ok(await until(() => guard.text.includes('audit sink threw')));
  t.notMatch(guard.text, /sink-private-detail/);
});

t.test(
  'userinfo in a request target inside the tunnel (CONNECT, a path segment) is never audited',
  async (t) => {
    const { broker, guard, events } = await setup(t);
    const s = broker.openSession({ egress: [HOST] });
    guard.watch(proxySecret(s.proxyUrl));
    const targets = [
      `CONNECT id:${SECRET}@${HOST}:443`,
      `CONNECT ${HOST}:${SECRET}@${HOST}:443`,
      `GET /a/id:${SECRET}@${HOST}/b`,
      `GET /id:${SECRET}@x`,
    ];
    for (const target of targets) {
      const tls = await openTunnel(s, broker.port, HOST);
      await exchange(tls, `${target} HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`, (o) => o.endsWith('}'));
      tls.destroy();
    }
    t.ok(await until(() => events.length === targets.length));
    t.match(
      events.map((e) => e.path),
      [
        '/{redacted}@api.example.com:443',
        '/{redacted}@api.example.com:443',
        '/a/{redacted}@api.example.com/b',
        '/{redacted}@x',
      ],
      'the host part stays readable',
    );
    t.notMatch(guard.text, SECRET);
  },
);
