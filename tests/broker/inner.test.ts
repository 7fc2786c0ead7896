import t from 'tap';
import { brokerFixture, exchange, openTunnel, until } from '../helpers/broker.js';

const HOST = 'api.example.com';
const get = (path: string, extra = ''): string => `GET ${path} HTTP/1.1\r\nHost: ${HOST}\r\n${extra}\r\n`;

t.test('an answer without Content-Length is re-framed as chunked and the tunnel stays usable', async (t) => {
  const f = await brokerFixture(t);
  f.upstream.route((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('ab');
    setTimeout(() => res.end(`cd${req.url}`), 20);
  });
  const s = f.session();
  const tls = await openTunnel(s, f.broker.port, HOST);
  const out = await exchange(tls, get('/one'), (o) => o.endsWith('0\r\n\r\n'));
  t.match(out, /^HTTP\/1\.1 200 OK\r\n/);
  t.match(out, /\r\ntransfer-encoding: chunked\r\n/);
  t.notMatch(out, /content-length/i);
  t.match(out, /\r\n\r\n2\r\nab\r\n6\r\ncd\/one\r\n0\r\n\r\n$/);
  const again = await exchange(tls, get('/two'), (o) => o.endsWith('0\r\n\r\n'));
  t.match(again, /cd\/two\r\n0\r\n\r\n$/, 'the same tunnel answers the next request');
  tls.destroy();
});

t.test('HEAD, 204 and 304 answers carry no body, and the next answer follows them', async (t) => {
  const f = await brokerFixture(t);
  f.upstream.route((req, res) => {
    if (req.url === '/empty') res.writeHead(204).end();
    else if (req.url === '/same') res.writeHead(304, { etag: '"x"' }).end();
    else res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '5' }).end('hello');
  });
  const s = f.session();
  const tls = await openTunnel(s, f.broker.port, HOST);
  const out = await exchange(
    tls,
    `HEAD /h HTTP/1.1\r\nHost: ${HOST}\r\n\r\n${get('/empty')}${get('/same')}${get('/last')}`,
    (o) => o.endsWith('hello'),
  );
  const statuses = [...out.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
  t.same(statuses, [200, 204, 304, 200], out);
  t.match(out, /^HTTP\/1\.1 200 OK\r\n[\s\S]*?\r\n\r\nHTTP\/1\.1 204/, 'no body after the HEAD answer');
  t.equal(out.split('hello').length, 2, 'one body: the last answer’s');
  tls.destroy();
  t.ok(await until(() => f.events.length === 4));
});

t.test('Connection: close is answered with connection: close and the tunnel ends after it', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session();
  const tls = await openTunnel(s, f.broker.port, HOST);
  let ended = false;
  tls.on('end', () => (ended = true));
  const out = await exchange(tls, get('/x', 'Connection: close\r\n') + get('/never'));
  t.match(out, /^HTTP\/1\.1 200 OK\r\n/);
  t.match(out, /\r\nconnection: close\r\n/i);
  t.ok(await until(() => ended), 'the broker ended the connection');
  t.same(
    f.upstream.received.map((r) => r.url),
    ['/x'],
    'nothing after the closing request is read',
  );
  tls.destroy();
});

t.test('an answer the credentials phase builds with a line break in a value is never written', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session({
    credentials: {
      intercept: (head) =>
        head.target === '/token'
          ? { status: 200, headers: { 'x-bad': 'a\r\nset-cookie: stolen=1' }, body: '{}' }
          : undefined,
      authorizationFor: () => undefined,
    },
  });
  const tls = await openTunnel(s, f.broker.port, HOST);
  tls.on('error', () => {});
  const out = await exchange(tls, get('/token'));
  t.notMatch(out, /set-cookie/i, 'no header was injected');
  t.match(out, /^HTTP\/1\.1 500 /, 'an internal failure, answered as one');
  tls.destroy();
});
