/**
 * Timeouts and caps on what a child can hold open: a CONNECT that never finishes TLS, a
 * request head trickled byte by byte, and more tunnels than a session may have at once.
 * Each is refused with its code and audited once; tests set small values through Limits.
 */
import t from 'tap';
import { DEFAULT_LIMITS } from '../../src/broker/types.js';
import { brokerFixture, exchange, openTunnel, proxyAuth, rawConnect, until } from '../helpers/broker.js';
import { curl } from '../helpers/curl.js';

const HOST = 'api.example.com';
const connectHead = (proxyUrl: string, host = HOST): string =>
  `CONNECT ${host}:443 HTTP/1.1\r\nHost: ${host}:443\r\nProxy-Authorization: ${proxyAuth(proxyUrl)}\r\n\r\n`;

t.test('defaults a real CLI never reaches', async (t) => {
  t.equal(DEFAULT_LIMITS.tlsHandshakeTimeoutMs, 10_000);
  t.equal(DEFAULT_LIMITS.requestHeadTimeoutMs, 10_000);
  t.equal(DEFAULT_LIMITS.maxTunnels, 64);
});

t.test(
  'a CONNECT that never starts or never finishes TLS is closed at the handshake timeout, audited once',
  async (t) => {
    const f = await brokerFixture(t);
    const s = f.session({ limits: { tlsHandshakeTimeoutMs: 300 } });
    // silent: 200, then nothing
    const silent = await rawConnect(f.broker.port, connectHead(s.proxyUrl));
    t.match(silent.head, /^HTTP\/1\.1 200/);
    // half a ClientHello: the record header promises more than is sent
    const half = await rawConnect(f.broker.port, connectHead(s.proxyUrl));
    half.socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00]));
    let closed = 0;
    silent.socket.on('close', () => closed++);
    half.socket.on('close', () => closed++);
    t.ok(await until(() => closed === 2), 'both tunnels closed');
    t.ok(await until(() => f.events.length === 2));
    for (const e of f.events) {
      t.match(e, {
        type: 'egress.blocked',
        method: 'CONNECT',
        host: HOST,
        code: 'CLI_TLS_HANDSHAKE_TIMEOUT',
        class: 'write',
        outcome: 'not_sent',
      });
      t.notOk('status' in e || 'refusalStatus' in e, 'no answer: the tunnel is just closed');
    }
    t.equal(s.openTunnels, 0);
    t.equal(s.stats.requests, 2, 'counted against the budget');
  },
);

t.test(
  'a finished handshake is not cut by the handshake timer, however long the tunnel then idles',
  async (t) => {
    const f = await brokerFixture(t);
    const s = f.session({ limits: { tlsHandshakeTimeoutMs: 100 } });
    const tls = await openTunnel(s, f.broker.port, HOST);
    await new Promise((r) => setTimeout(r, 300)); // three timeouts' worth of idling (setup)
    const out = await exchange(tls, `GET /x HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`, (o) => o.endsWith('}'));
    t.match(out, /^HTTP\/1\.1 200/);
    tls.destroy();
  },
);

t.test(
  'a request head trickled one byte at a time gets 408 CLI_REQUEST_HEAD_TIMEOUT, audited once, nothing sent',
  async (t) => {
    const f = await brokerFixture(t, { broker: { limits: { requestHeadTimeoutMs: 400 } } });
    const s = f.session();
    const tls = await openTunnel(s, f.broker.port, HOST);
    const head = `GET /slow HTTP/1.1\r\nHost: ${HOST}\r\nX-Pad: ${'p'.repeat(200)}\r\n\r\n`;
    let out = '';
    let ended = false;
    tls.on('data', (c: Buffer) => (out += c.toString('latin1')));
    tls.on('close', () => (ended = true));
    let i = 0;
    const timer = setInterval(() => {
      if (!ended && i < head.length) tls.write(head[i++]!);
    }, 20);
    t.teardown(() => clearInterval(timer));
    t.ok(await until(() => ended, 5000), 'the connection was closed');
    clearInterval(timer);
    t.ok(i < head.length, `cut before the head was complete (${i}/${head.length} bytes)`);
    t.match(out, /^HTTP\/1\.1 408 Request Timeout/);
    t.match(out, /CLI_REQUEST_HEAD_TIMEOUT/);
    t.equal(f.upstream.received.length, 0);
    t.ok(await until(() => f.events.length === 1));
    t.match(f.events, [
      {
        type: 'egress.blocked',
        code: 'CLI_REQUEST_HEAD_TIMEOUT',
        refusalStatus: 408,
        outcome: 'not_sent',
        class: 'write',
      },
    ]);
  },
);

t.test("a session's own head timeout holds inside its tunnels, shorter than the broker's", async (t) => {
  // the broker's own is a minute: a close within the wait below is the session's timer
  const f = await brokerFixture(t, { broker: { limits: { requestHeadTimeoutMs: 60_000 } } });
  const s = f.session({ limits: { requestHeadTimeoutMs: 300 } });
  const tls = await openTunnel(s, f.broker.port, HOST);
  let out = '';
  let ended = false;
  tls.on('data', (c: Buffer) => (out += c.toString('latin1')));
  tls.on('close', () => (ended = true));
  tls.write(`GET /slow HTTP/1.1\r\nHost: ${HOST}\r\n`);
  t.ok(await until(() => ended, 10_000), 'the connection was closed');
  t.match(out, /^HTTP\/1\.1 408 Request Timeout/);
  t.ok(await until(() => f.events.length === 1));
  t.match(f.events, [{ code: 'CLI_REQUEST_HEAD_TIMEOUT' }]);
});

t.test(
  'a fresh tunnel that sends nothing within the head timeout is closed quietly: no 408, no event',
  async (t) => {
    const f = await brokerFixture(t, { broker: { limits: { requestHeadTimeoutMs: 200 } } });
    const s = f.session();
    const tls = await openTunnel(s, f.broker.port, HOST);
    let got = '';
    tls.on('data', (c: Buffer) => (got += c));
    t.ok(await until(() => tls.destroyed || tls.readableEnded), 'closed');
    t.equal(got, '');
    t.equal(f.events.length, 0);
  },
);

t.test(
  'the head timeout covers only the head: an idle keep-alive tunnel and a slow body are not cut',
  async (t) => {
    const f = await brokerFixture(t, { broker: { limits: { requestHeadTimeoutMs: 200 } } });
    const s = f.session({ tier: 'write' });
    const tls = await openTunnel(s, f.broker.port, HOST);
    const warm = await exchange(tls, `GET /warm HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`, (o) => o.endsWith('}'));
    t.match(warm, /^HTTP\/1\.1 200/);
    await new Promise((r) => setTimeout(r, 500)); // idle between requests (setup)
    const first = await exchange(tls, `GET /a HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`, (o) => o.endsWith('}'));
    t.match(first, /^HTTP\/1\.1 200/);
    tls.write(
      `POST /b HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/octet-stream\r\nContent-Length: 4\r\n\r\nab`,
    );
    await new Promise((r) => setTimeout(r, 500)); // the body's second half comes late (setup)
    const second = await exchange(tls, 'cd', (o) => o.endsWith('}'));
    t.match(second, /^HTTP\/1\.1 200/);
    t.equal(f.upstream.received.at(-1)?.bodyBytes, 4);
    tls.destroy();
  },
);

t.test(
  'a session may have at most maxTunnels tunnels open: the next CONNECT gets 429 CLI_TUNNEL_LIMIT_EXCEEDED',
  async (t) => {
    const f = await brokerFixture(t);
    const s = f.session({ limits: { maxTunnels: 3 } });
    const open = [
      await openTunnel(s, f.broker.port, HOST),
      await openTunnel(s, f.broker.port, HOST),
      await openTunnel(s, f.broker.port, HOST),
    ];
    const refused = await rawConnect(f.broker.port, connectHead(s.proxyUrl));
    t.match(refused.head, /^HTTP\/1\.1 429 Too Many Requests/);
    t.match(refused.rest.toString(), /CLI_TUNNEL_LIMIT_EXCEEDED/);
    t.match(f.events, [
      {
        type: 'egress.blocked',
        method: 'CONNECT',
        host: HOST,
        code: 'CLI_TUNNEL_LIMIT_EXCEEDED',
        refusalStatus: 429,
        outcome: 'not_sent',
      },
    ]);
    // another session is not affected
    const other = f.session({ limits: { maxTunnels: 3 } });
    const o = await openTunnel(other, f.broker.port, HOST);
    o.destroy();
    // closing one frees a slot
    open[0]!.destroy();
    t.ok(await until(() => s.openTunnels === 2));
    const again = await openTunnel(s, f.broker.port, HOST);
    const out = await exchange(again, `GET /x HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`, (x) => x.endsWith('}'));
    t.match(out, /^HTTP\/1\.1 200/);
    for (const x of [...open, again]) x.destroy();
    t.equal(f.events.filter((e) => e.type === 'egress.blocked').length, 1, 'the refusal was audited once');
  },
);

t.test('curl through a session at its tunnel cap prints the refusal', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session({ limits: { maxTunnels: 1 } });
  const held = await openTunnel(s, f.broker.port, HOST);
  const r = await curl(s, ['https://api.example.com/x']);
  t.not(r.code, 0);
  t.match(r.stderr, /429/);
  held.destroy();
});

t.test('a CONNECT head trickled to the proxy listener is cut at the same head timeout', async (t) => {
  const f = await brokerFixture(t, { broker: { limits: { requestHeadTimeoutMs: 300 } } });
  const { connect } = await import('node:net');
  const socket = connect(f.broker.port, '127.0.0.1');
  let out = '';
  let closed = false;
  socket.on('data', (c: Buffer) => (out += c.toString('latin1')));
  socket.on('close', () => (closed = true));
  const head = `CONNECT ${HOST}:443 HTTP/1.1\r\nHost: ${HOST}:443\r\nX-Pad: ${'p'.repeat(200)}\r\n\r\n`;
  let i = 0;
  const timer = setInterval(() => {
    if (!closed && i < head.length) socket.write(head[i++]!);
  }, 20);
  t.teardown(() => clearInterval(timer));
  t.ok(await until(() => closed, 5000));
  t.ok(i < head.length);
  t.match(out, /^HTTP\/1\.1 408/);
  t.match(out, /CLI_REQUEST_HEAD_TIMEOUT/);
});

t.test(
  'a head that completes after its timeout was refused is never a request: nothing sent, one event, the 408 after the earlier answer',
  async (t) => {
    // node's head timer refuses the head but leaves its parser running: the rest of the head
    // would still become a request, forwarded after the child was told it timed out.
    const f = await brokerFixture(t, { broker: { limits: { requestHeadTimeoutMs: 300 } } });
    f.upstream.route((req, res) => {
      setTimeout(
        () => {
          res.writeHead(200, { 'content-length': '4' });
          res.end('done');
        },
        req.url === '/slow' ? 1200 : 0,
      );
    });
    const s = f.session();
    const tls = await openTunnel(s, f.broker.port, 'api.example.com');
    tls.on('error', () => {});
    let got = '';
    tls.on('data', (c: Buffer) => (got += c.toString('latin1')));
    tls.write('GET /slow HTTP/1.1\r\nHost: api.example.com\r\n\r\nGET /late HTTP/1.1\r\nHo');
    await until(() => false, 700); // past the head timeout, before /slow is answered (setup, not an assertion)
    tls.write('st: api.example.com\r\n\r\n');
    t.ok(await until(() => got.includes('408')), 'the 408 arrives');
    await until(() => f.events.length > 2, 500); // a third event would show up here
    t.match(got, /^HTTP\/1\.1 200 OK[\s\S]*doneHTTP\/1\.1 408 /, 'the earlier answer first');
    t.same(
      f.upstream.received.map((r) => r.url),
      ['/slow'],
      'the late head was not sent',
    );
    t.equal(f.events.length, 2, JSON.stringify(f.events.map((e) => [e.path, e.code])));
    tls.destroy();
  },
);
