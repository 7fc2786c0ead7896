import t from 'tap';
import { brokerFixture, brokerToVendor, exchange, openTunnel, until } from '../helpers/broker.js';
import { curl } from '../helpers/curl.js';

t.test('real curl GET through the broker: forwarded, streamed back, audited', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session({ labels: { run: 'r1' } });
  const r = await curl(s, ['https://api.example.com/repos/acme/app?per_page=5']);
  t.equal(r.code, 0, r.stderr);
  t.same(JSON.parse(r.stdout), { method: 'GET', url: '/repos/acme/app?per_page=5', bytes: 0 });
  t.equal(f.upstream.received.length, 1);
  t.equal(f.upstream.received[0]!.host, 'api.example.com', 'Host is the real host');
  t.equal(f.events.length, 1);
  t.match(f.events[0], {
    type: 'egress.allowed',
    method: 'GET',
    host: 'api.example.com',
    path: '/repos/acme/app',
    class: 'read',
    decision: 'allow',
    status: 200,
    labels: { run: 'r1' },
  });
  t.notMatch(JSON.stringify(f.events), /per_page/, 'no query in audit events');
});

t.test('strip phase: Authorization, method overrides and hop-by-hop headers never go upstream', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session();
  const r = await curl(s, [
    '-H',
    'Authorization: token placeholder-token-0000',
    '-H',
    'X-HTTP-Method-Override: DELETE',
    '-H',
    'X-HTTP-Method: DELETE',
    '-H',
    'X-Method-Override: DELETE',
    '-H',
    'Connection: keep-alive, X-Secret-Hop',
    '-H',
    'X-Secret-Hop: 1',
    '-H',
    'Proxy-Authorization: Basic Zm9vOmJhcg==',
    '-H',
    'X-Kept: yes',
    'https://api.example.com/x',
  ]);
  t.equal(r.code, 0, r.stderr);
  const got = f.upstream.received[0]!;
  t.equal(got.method, 'GET', 'the real method, not the override');
  for (const h of [
    'authorization',
    'x-http-method-override',
    'x-http-method',
    'x-method-override',
    'x-secret-hop',
    'proxy-authorization',
  ])
    t.notOk(got.headers[h], `${h} stripped`);
  t.equal(got.headers['x-kept'], 'yes');
  t.equal(f.events[0]!.class, 'read', 'classified as the real GET');
  t.notMatch(JSON.stringify(got.rawHeaders), /placeholder-token/);
});

t.test('tier: a read session cannot POST; a write session can; destructive needs approval', async (t) => {
  const f = await brokerFixture(t);
  const read = f.session();
  const denied = await curl(read, [
    '-i',
    '-X',
    'POST',
    '-d',
    '{"a":1}',
    'https://api.example.com/repos/acme/app/issues',
  ]);
  t.match(denied.stdout, /^HTTP\/1\.1 422 Unprocessable Entity/);
  const body = JSON.parse(denied.stdout.slice(denied.stdout.indexOf('\r\n\r\n') + 4));
  t.match(body, {
    message: /CLI_REQUEST_TIER_DENIED/,
    error: { code: 'POLICY_BLOCKED', policyCode: 'CLI_REQUEST_TIER_DENIED' },
  });
  t.equal(f.upstream.received.length, 0, 'the denied POST never reached upstream');

  const write = f.session({ tier: 'write' });
  const ok = await curl(write, [
    '-X',
    'POST',
    '-d',
    '{"a":1}',
    'https://api.example.com/repos/acme/app/issues',
  ]);
  t.same(JSON.parse(ok.stdout), { method: 'POST', url: '/repos/acme/app/issues', bytes: 7 });
  const del = await curl(write, ['-i', '-X', 'DELETE', 'https://api.example.com/repos/acme/app']);
  t.match(del.stdout, /^HTTP\/1\.1 422/);
  t.match(del.stdout, /CLI_CONFIRMATION_REQUIRED/);
  t.same(
    f.upstream.received.map((r) => r.method),
    ['POST'],
  );
  t.same(
    f.events.map((e) => [e.type, e.class]),
    [
      ['egress.blocked', 'write'],
      ['egress.allowed', 'write'],
      ['egress.blocked', 'destructive'],
    ],
  );
});

t.test('keep-alive and pipelining inside one tunnel, answered in order', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session();
  const tls = await openTunnel(s, f.broker.port, 'api.example.com');
  const req = (p: string) => `GET ${p} HTTP/1.1\r\nHost: api.example.com\r\n\r\n`;
  const out = await exchange(
    tls,
    req('/one') + req('/two') + req('/three'),
    (o) => (o.match(/HTTP\/1\.1 200/g) ?? []).length === 3 && o.includes('/three"'),
  );
  const order = [...out.matchAll(/"url":"(\/\w+)"/g)].map((m) => m[1]);
  t.same(order, ['/one', '/two', '/three']);
  const again = await exchange(tls, req('/four'), (o) => o.includes('/four"'));
  t.match(again, /HTTP\/1\.1 200 OK/);
  tls.destroy();
  t.equal(f.upstream.received.length, 4);
});

t.test('curl reuses one tunnel for several URLs (keep-alive)', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session();
  const r = await curl(s, [
    '-v',
    'https://api.example.com/a',
    'https://api.example.com/b',
    'https://api.example.com/c',
  ]);
  t.equal(r.code, 0, r.stderr);
  t.equal((r.stderr.match(/CONNECT api\.example\.com:443/g) ?? []).length, 1, 'one CONNECT');
  t.match(r.stderr, /Re-using existing connection/);
  t.equal(f.upstream.received.length, 3);
});

t.test('the 129th request is refused with 429 and never reaches upstream', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session();
  const tls = await openTunnel(s, f.broker.port, 'api.example.com');
  let last = '';
  for (let i = 1; i <= 129; i++) {
    last = await exchange(tls, `GET /n/${i} HTTP/1.1\r\nHost: api.example.com\r\n\r\n`, (o) =>
      /\r\n\r\n[\s\S]*\}$/.test(o),
    );
    if (i === 128) t.match(last, /^HTTP\/1\.1 200/, 'the 128th passes');
  }
  t.match(last, /^HTTP\/1\.1 429 Too Many Requests/);
  t.match(last, /CLI_REQUEST_BUDGET_EXCEEDED/);
  t.equal(f.upstream.received.length, 128);
  t.notOk(f.upstream.received.find((r) => r.url === '/n/129'));
  tls.destroy();
});

t.test('two sessions at once with different egress lists', async (t) => {
  const f = await brokerFixture(t, { hosts: ['api.example.com', 'other.example.com'] });
  const a = f.session({ egress: ['api.example.com'] });
  const b = f.session({ egress: ['other.example.com'] });
  const [aOwn, aOther, bOwn, bOther] = await Promise.all([
    curl(a, ['-i', 'https://api.example.com/a']),
    curl(a, ['-i', 'https://other.example.com/a']),
    curl(b, ['-i', 'https://other.example.com/b']),
    curl(b, ['-i', 'https://api.example.com/b']),
  ]);
  t.match(aOwn.stdout, /^HTTP\/1\.1 200/);
  t.match(bOwn.stdout, /^HTTP\/1\.1 200/);
  for (const denied of [aOther, bOther]) {
    t.match(denied.stdout, /^HTTP\/1\.1 422 Unprocessable Entity/);
    t.match(denied.stdout, /"policyCode":"CLI_EGRESS_HOST_DENIED"/);
  }
  t.same(f.upstream.received.map((r) => `${r.host}${r.url}`).sort(), [
    'api.example.com/a',
    'other.example.com/b',
  ]);
  t.same(new Set(f.events.map((e) => e.session)), new Set([a.id, b.id]));
});

t.test(
  "respond phase: the vendor's fields reach the child in order, repeats kept, hop-by-hop and Connection-named ones dropped",
  async (t) => {
    const f = await brokerFixture(t);
    const { createServer } = await import('node:tls');
    const leaf = f.upstream.pki.leaf('api.example.com');
    const vendor = createServer({ key: leaf.key, cert: leaf.cert }, (sock) => {
      sock.on('error', () => {});
      sock.once('data', () =>
        sock.write(
          'HTTP/1.1 200 Fine Then\r\n' +
            'Set-Cookie: a=1\r\n' +
            'X-Trace: t1\r\n' +
            'Set-Cookie: b=2\r\n' +
            'Connection: keep-alive, X-Vendor-Hop\r\n' +
            'X-Vendor-Hop: secret\r\n' +
            'Keep-Alive: timeout=5\r\n' +
            'Proxy-Authenticate: Basic realm="v"\r\n' +
            'Proxy-Connection: keep-alive\r\n' +
            'Trailer: x-sum\r\n' +
            'Upgrade: h2c\r\n' +
            'TE: trailers\r\n' +
            'Transfer-Encoding: chunked\r\n' +
            '\r\n' +
            '5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n',
        ),
      );
    });
    const { broker } = await brokerToVendor(t, vendor, f.upstream.pki.caPem);
    const s = broker.openSession({ egress: ['api.example.com'], tier: 'read' });
    const tls = await openTunnel(s, broker.port, 'api.example.com');
    let got = '';
    tls.on('data', (c: Buffer) => (got += c.toString('latin1')));
    tls.write('GET /f HTTP/1.1\r\nHost: api.example.com\r\n\r\n');
    t.ok(await until(() => got.endsWith('0\r\n\r\n')), 'the whole answer arrived');
    const [head, body] = got.split('\r\n\r\n', 2) as [string, string];
    const lines = head.split('\r\n');
    t.equal(lines[0], 'HTTP/1.1 200 Fine Then', 'the reason phrase as the vendor sent it');
    t.same(
      lines.slice(1).filter((l) => !l.startsWith('transfer-encoding')),
      ['set-cookie: a=1', 'x-trace: t1', 'set-cookie: b=2'],
      'the end-to-end fields, in order',
    );
    t.ok(lines.includes('transfer-encoding: chunked'), "the broker's own framing");
    t.equal(got.slice(head.length + 4), '5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n');
    t.ok(body.startsWith('5\r\nhello'));
    tls.destroy();
  },
);
