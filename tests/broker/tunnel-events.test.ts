import t from 'tap';
import type { TunnelEvent } from '../../src/broker/types.js';
import { connect as tlsConnect } from 'node:tls';
import { brokerFixture, exchange, openTunnel, proxyAuth, rawConnect, until } from '../helpers/broker.js';
import { curl } from '../helpers/curl.js';

// onTunnel: one event per tunnel when it closes, with the TLS outcome and the requests it
// carried — what shows a client that rejected the session CA, which no audit event does.

async function fixture(t: Parameters<typeof brokerFixture>[0]) {
  const tunnels: TunnelEvent[] = [];
  const f = await brokerFixture(t, { broker: { onTunnel: (e) => tunnels.push(e) } });
  return { ...f, tunnels };
}

t.test('a tunnel that carried requests: established, with its count and the session labels', async (t) => {
  const f = await fixture(t);
  const s = f.session({ labels: { runId: 'r1' } });
  const r = await curl(s, ['https://api.example.com/a', '--next', 'https://api.example.com/b']);
  t.equal(r.code, 0, r.stderr);
  t.ok(await until(() => f.tunnels.length === 1));
  t.match(f.tunnels[0], {
    session: s.id,
    labels: { runId: 'r1' },
    host: 'api.example.com',
    tls: 'established',
    requests: 2,
  });
  t.notOk(f.tunnels[0]!.error);
});

t.test(
  'curl trusting another CA: the handshake fails, the event names the alert, no audit event',
  async (t) => {
    const f = await fixture(t);
    const s = f.session();
    const r = await curl(s, ['--cacert', '/etc/ssl/certs/ca-certificates.crt', 'https://api.example.com/a']);
    t.equal(r.code, 60, 'curl refused the leaf');
    t.ok(await until(() => f.tunnels.length === 1));
    t.match(f.tunnels[0], { host: 'api.example.com', tls: 'failed', requests: 0, error: /unknown ca/ });
    t.equal(f.events.length, 0, 'no request was made, so none is audited');
  },
);

t.test('a client that finishes the handshake and leaves: established with no request', async (t) => {
  const f = await fixture(t);
  const s = f.session();
  const { head, socket } = await rawConnect(
    f.broker.port,
    `CONNECT api.example.com:443 HTTP/1.1\r\nProxy-Authorization: ${proxyAuth(s.proxyUrl)}\r\n\r\n`,
  );
  t.match(head, /^HTTP\/1\.1 200/);
  const tls = tlsConnect({
    socket,
    servername: 'api.example.com',
    ca: s.caCertPem,
    ALPNProtocols: ['http/1.1'],
  });
  await new Promise((r) => tls.once('secureConnect', r));
  // the server's side of the handshake is done once the client's Finished has arrived
  await new Promise((r) => setTimeout(r, 100));
  socket.destroy();
  t.ok(await until(() => f.tunnels.length === 1));
  t.match(f.tunnels[0], { tls: 'established', requests: 0 });
});

t.test('an h2-only client: failed, beside the CLI_HTTP2_ONLY audit event', async (t) => {
  const f = await fixture(t);
  const s = f.session();
  await t.rejects(openTunnel(s, f.broker.port, 'api.example.com', { alpn: ['h2'] }));
  t.ok(await until(() => f.tunnels.length === 1 && f.events.length === 1));
  t.match(f.tunnels[0], { tls: 'failed', requests: 0 });
  t.equal(f.events[0]!.code, 'CLI_HTTP2_ONLY');
});

t.test('an upgrade request counts as a request of its tunnel', async (t) => {
  const f = await fixture(t);
  const s = f.session();
  const tls = await openTunnel(s, f.broker.port, 'api.example.com');
  const out = await exchange(
    tls,
    'GET /ws HTTP/1.1\r\nHost: api.example.com\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
    (x) => x.includes('\r\n\r\n'),
  );
  t.match(out, /^HTTP\/1\.1 403/);
  tls.destroy();
  t.ok(await until(() => f.tunnels.length === 1));
  t.match(f.tunnels[0], { tls: 'established', requests: 1 });
});

t.test('a tunnel the session ends is reported too', async (t) => {
  const f = await fixture(t);
  const s = f.session();
  const tls = await openTunnel(s, f.broker.port, 'api.example.com');
  await exchange(tls, 'GET /a HTTP/1.1\r\nHost: api.example.com\r\n\r\n', (x) => x.includes('\r\n\r\n'));
  t.equal(f.tunnels.length, 0, 'still open');
  s.close();
  t.ok(await until(() => f.tunnels.length === 1, 1000));
  t.match(f.tunnels[0], { tls: 'established', requests: 1 });
});
