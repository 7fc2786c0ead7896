import t from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import { brokerFixture, exchange, openTunnel, until } from '../helpers/broker.js';
import { curl } from '../helpers/curl.js';
import { startUpstream } from '../helpers/upstream.js';

const handles = (): string[] =>
  process
    .getActiveResourcesInfo()
    .filter((r) => r !== 'TTYWrap' && r !== 'Timeout')
    .sort();

t.test('close() ends every socket, timer and upstream connection: no handle leaks', async (t) => {
  const upstream = await startUpstream();
  const before = handles();
  const timersBefore = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const broker = await createBroker({
    upstream: { ca: upstream.pki.caPem, resolve: upstream.resolve, allowAddresses: ['127.0.0.0/8'] },
  });
  const s = broker.openSession({ egress: ['api.example.com'] });
  const r = await curl(s, ['https://api.example.com/x']);
  t.equal(r.code, 0, r.stderr);
  const idle = await openTunnel(s, broker.port, 'api.example.com'); // left open on purpose
  await exchange(idle, 'GET /y HTTP/1.1\r\nHost: api.example.com\r\n\r\n', (o) => o.endsWith('}'));
  broker.openSession({ egress: ['api.example.com'] }); // never used, has a deadline timer
  await broker.close();
  await until(() => handles().length === before.length);
  t.same(handles(), before, 'the same handles as before the broker started');
  t.equal(
    process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length,
    timersBefore,
    'no timers left',
  );
  t.ok(idle.destroyed || idle.readableEnded, 'the idle tunnel was closed');
  t.throws(() => broker.openSession({ egress: ['api.example.com'] }), { code: 'CLI_SESSION_CLOSED' });
  await upstream.close();
});

t.test('the session deadline closes its tunnels; later CONNECTs get 407', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session({ limits: { deadlineMs: 1000 } });
  const tls = await openTunnel(s, f.broker.port, 'api.example.com');
  const first = await exchange(tls, 'GET /a HTTP/1.1\r\nHost: api.example.com\r\n\r\n', (o) =>
    o.endsWith('}'),
  );
  t.match(first, /^HTTP\/1\.1 200/);
  t.ok(await until(() => s.closed), 'the deadline closed the session');
  t.ok(await until(() => tls.destroyed || tls.readableEnded), 'the tunnel is closed');
  const r = await curl(s, ['https://api.example.com/b']);
  t.equal(r.code, 56);
  t.match(r.stderr, /407/);
  t.equal(f.upstream.received.length, 1);
});

t.test('closing one session leaves another untouched', async (t) => {
  const f = await brokerFixture(t);
  const a = f.session();
  const b = f.session();
  const ta = await openTunnel(a, f.broker.port, 'api.example.com');
  const tb = await openTunnel(b, f.broker.port, 'api.example.com');
  a.close();
  t.ok(await until(() => ta.destroyed || ta.readableEnded));
  const out = await exchange(tb, 'GET /b HTTP/1.1\r\nHost: api.example.com\r\n\r\n', (o) => o.endsWith('}'));
  t.match(out, /^HTTP\/1\.1 200/);
  tb.destroy();
});

t.test('an upstream that cannot be reached gives a coded 502, not a hang', async (t) => {
  const broker = await createBroker({
    upstream: { resolve: () => ({ host: '127.0.0.1', port: 1 }), allowAddresses: ['127.0.0.0/8'] },
  });
  t.teardown(() => broker.close());
  const s = broker.openSession({ egress: ['api.example.com'] });
  const r = await curl(s, ['-i', 'https://api.example.com/x']);
  t.match(r.stdout, /^HTTP\/1\.1 502 Bad Gateway/);
  t.match(r.stdout, /UPSTREAM_UNAVAILABLE/);
});

t.test('an upstream with an untrusted certificate is refused (TLS verified upstream)', async (t) => {
  const upstream = await startUpstream();
  t.teardown(() => upstream.close());
  const broker = await createBroker({
    upstream: { resolve: upstream.resolve, allowAddresses: ['127.0.0.0/8'] },
  }); // no upstream.ca
  t.teardown(() => broker.close());
  const s = broker.openSession({ egress: ['api.example.com'] });
  const r = await curl(s, ['-i', 'https://api.example.com/x']);
  t.match(r.stdout, /^HTTP\/1\.1 502/);
  t.equal(upstream.received.length, 0);
});
