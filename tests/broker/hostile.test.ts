import t from 'tap';
import WebSocket from 'ws';
import { brokerFixture, exchange, openTunnel, until } from '../helpers/broker.js';
import { curl } from '../helpers/curl.js';

const statusOf = (raw: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
const bodyOf = (raw: string): { message: string; error: { code: string; policyCode?: string } } =>
  JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));

t.test('hostile requests inside the tunnel get a clean coded error and never reach upstream', async (t) => {
  const f = await brokerFixture(t, { hosts: ['api.example.com', 'other.example.com'] });
  const s = f.session({ tier: 'write' });
  const cases: Record<string, { raw: string; status: number; code: string }> = {
    'Content-Length plus Transfer-Encoding': {
      raw: 'POST /x HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      status: 400,
      code: 'CLI_BAD_REQUEST',
    },
    'oversized headers': {
      raw: `GET /x HTTP/1.1\r\nHost: api.example.com\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`,
      status: 431,
      code: 'CLI_HEADERS_TOO_LARGE',
    },
    'malformed request line': {
      raw: 'GET /x HTTP/9.9 extra\r\nHost: api.example.com\r\n\r\n',
      status: 400,
      code: 'CLI_BAD_REQUEST',
    },
    'header with a bare LF injection': {
      raw: 'GET /x HTTP/1.1\r\nHost: api.example.com\r\nX-A: 1\nX-B: 2\r\n\r\n',
      status: 400,
      code: 'CLI_BAD_REQUEST',
    },
    'two Content-Length headers': {
      raw: 'POST /x HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
      status: 400,
      code: 'CLI_BAD_REQUEST',
    },
    'two Host headers, different hosts': {
      raw: 'GET /x HTTP/1.1\r\nHost: api.example.com\r\nHost: other.example.com\r\n\r\n',
      status: 400,
      code: 'CLI_BAD_REQUEST',
    },
    'two Host headers, the same host': {
      raw: 'GET /x HTTP/1.1\r\nHost: api.example.com\r\nHost: api.example.com\r\n\r\n',
      status: 400,
      code: 'CLI_BAD_REQUEST',
    },
    'two Host headers, other one first': {
      raw: 'GET /x HTTP/1.1\r\nHost: other.example.com\r\nhost: api.example.com\r\n\r\n',
      status: 400,
      code: 'CLI_BAD_REQUEST',
    },
    'two Host headers, different case': {
      raw: 'GET /x HTTP/1.1\r\nhost: api.example.com\r\nHOST: other.example.com\r\n\r\n',
      status: 400,
      code: 'CLI_BAD_REQUEST',
    },
    'Host split by a comma list': {
      raw: 'GET /x HTTP/1.1\r\nHost: api.example.com, other.example.com\r\n\r\n',
      status: 400,
      code: 'CLI_HOST_MISMATCH',
    },
    'two equal Content-Length headers': {
      raw: 'POST /x HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab',
      status: 400,
      code: 'CLI_BAD_REQUEST',
    },
    'Content-Length as a list': {
      raw: 'POST /x HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 2, 2\r\n\r\nab',
      status: 400,
      code: 'CLI_BAD_REQUEST',
    },
    'signed Content-Length': {
      raw: 'POST /x HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: +2\r\n\r\nab',
      status: 400,
      code: 'CLI_BAD_REQUEST',
    },
    'Transfer-Encoding not ending in chunked': {
      raw: 'POST /x HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n',
      status: 400,
      code: 'CLI_BAD_REQUEST',
    },
    'Transfer-Encoding obs-fold': {
      raw: 'POST /x HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n',
      status: 400,
      code: 'CLI_BAD_REQUEST',
    },
    'space before the header colon': {
      raw: 'POST /x HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n',
      status: 400,
      code: 'CLI_BAD_REQUEST',
    },
    'chunk size with a bad extension': {
      raw: 'POST /x HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n2;\nab\r\n0\r\n\r\n',
      status: 400,
      code: 'CLI_BAD_REQUEST',
    },
    'Host of another host': {
      raw: 'GET /x HTTP/1.1\r\nHost: other.example.com\r\n\r\n',
      status: 400,
      code: 'CLI_HOST_MISMATCH',
    },
    'missing Host': { raw: 'GET /x HTTP/1.1\r\n\r\n', status: 400, code: 'CLI_HOST_MISMATCH' },
    'absolute-form target inside the tunnel': {
      raw: 'GET https://other.example.com/x HTTP/1.1\r\nHost: api.example.com\r\n\r\n',
      status: 400,
      code: 'CLI_BAD_REQUEST',
    },
    'CONNECT inside the tunnel': {
      raw: 'CONNECT other.example.com:443 HTTP/1.1\r\nHost: api.example.com\r\n\r\n',
      status: 405,
      code: 'CLI_TUNNEL_CONNECT_REFUSED',
    },
    'AWS SigV4 Authorization header': {
      raw: 'GET /bucket/key HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=abc\r\nx-amz-date: 20260101T000000Z\r\n\r\n',
      status: 422,
      code: 'CLI_REQUEST_SIGNING_UNSUPPORTED',
    },
    'SigV4 presigned query': {
      raw: 'GET /k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=abc HTTP/1.1\r\nHost: api.example.com\r\n\r\n',
      status: 422,
      code: 'CLI_REQUEST_SIGNING_UNSUPPORTED',
    },
    'HTTP message signature': {
      raw: 'GET /k HTTP/1.1\r\nHost: api.example.com\r\nSignature-Input: sig1=("@method")\r\nSignature: sig1=:abc:\r\n\r\n',
      status: 422,
      code: 'CLI_REQUEST_SIGNING_UNSUPPORTED',
    },
  };
  for (const [name, c] of Object.entries(cases)) {
    await t.test(name, async (t) => {
      const tls = await openTunnel(s, f.broker.port, 'api.example.com');
      const out = await exchange(tls, c.raw, (o) => /\r\n\r\n\{.*\}$/s.test(o));
      t.equal(statusOf(out), c.status, out.split('\r\n')[0] ?? '');
      t.match(out, /content-type: application\/json/i);
      t.equal(bodyOf(out).error.code, c.code);
      tls.destroy();
    });
  }
  t.equal(f.upstream.received.length, 0, 'nothing reached upstream');
  t.ok(await until(() => s.stats.refused >= Object.keys(cases).length), 'audited');
  // more than eight of one code: the rest is folded into one summary when the session closes
  s.close();
  const folded = f.events.reduce((n, e) => n + (e.folded ?? 0), 0);
  const one = f.events.filter((e) => e.folded === undefined).length;
  t.equal(one + folded, Object.keys(cases).length, 'every refusal is audited, once');
  t.ok(
    f.events.every(
      (e) =>
        e.type === 'egress.blocked' &&
        e.outcome === 'not_sent' &&
        !('status' in e) &&
        e.refusalStatus !== undefined &&
        e.class !== undefined,
    ),
  );
});

t.test('a WebSocket upgrade from a real ws client is refused', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session({ tier: 'write' });
  const tls = await openTunnel(s, f.broker.port, 'api.example.com');
  const ws = new WebSocket('wss://api.example.com/socket', { createConnection: () => tls });
  const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    ws.on('unexpected-response', (_req, r) => {
      let body = '';
      r.on('data', (d: Buffer) => (body += d));
      r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
    });
    ws.on('open', () => reject(new Error('upgrade was accepted')));
    ws.on('error', () => {});
  });
  t.equal(res.status, 403);
  t.equal(JSON.parse(res.body).error.code, 'CLI_UPGRADE_REFUSED');
  t.equal(f.upstream.received.length, 0);
  t.match(f.events[0], { type: 'egress.blocked', code: 'CLI_UPGRADE_REFUSED', path: '/socket' });
});

t.test('curl --http1.1 WebSocket-style upgrade headers are refused', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session({ tier: 'write' });
  const r = await curl(s, [
    '-i',
    '--http1.1',
    '-H',
    'Connection: Upgrade',
    '-H',
    'Upgrade: websocket',
    '-H',
    'Sec-WebSocket-Version: 13',
    '-H',
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
    'https://api.example.com/ws',
  ]);
  t.match(r.stdout, /^HTTP\/1\.1 403 Forbidden/);
  t.match(r.stdout, /CLI_UPGRADE_REFUSED/);
  t.equal(f.upstream.received.length, 0);
});

t.test('SNI that differs from the CONNECT host is refused with 400', async (t) => {
  const f = await brokerFixture(t, { hosts: ['api.example.com', 'other.example.com'] });
  const s = f.session({ egress: ['api.example.com', 'other.example.com'] });
  const { rawConnect, proxyAuth } = await import('../helpers/broker.js');
  const { connect } = await import('node:tls');
  const { socket } = await rawConnect(
    f.broker.port,
    `CONNECT api.example.com:443 HTTP/1.1\r\nProxy-Authorization: ${proxyAuth(s.proxyUrl)}\r\n\r\n`,
  );
  const tls = await new Promise<import('node:tls').TLSSocket>((resolve, reject) => {
    const c = connect(
      {
        socket,
        servername: 'other.example.com',
        ca: s.caCertPem,
        ALPNProtocols: ['http/1.1'],
        checkServerIdentity: () => undefined,
      },
      () => resolve(c),
    );
    c.once('error', reject);
  });
  const out = await exchange(tls, 'GET /x HTTP/1.1\r\nHost: other.example.com\r\n\r\n', (o) => /\}$/.test(o));
  t.equal(statusOf(out), 400);
  t.equal(bodyOf(out).error.code, 'CLI_HOST_MISMATCH');
  t.match(bodyOf(out).message, /SNI/);
  t.equal(f.upstream.received.length, 0);
  tls.destroy();
});

t.test(
  'refusals carry the standard reason phrase, JSON content type, message and error object',
  async (t) => {
    const f = await brokerFixture(t);
    const s = f.session();
    const tls = await openTunnel(s, f.broker.port, 'api.example.com');
    const out = await exchange(tls, 'DELETE /repos/acme/app HTTP/1.1\r\nHost: api.example.com\r\n\r\n', (o) =>
      /\}$/.test(o),
    );
    t.match(out, /^HTTP\/1\.1 422 Unprocessable Entity\r\n/);
    t.match(out, /\r\ncontent-type: application\/json\r\n/);
    const b = bodyOf(out);
    t.equal(b.error.code, 'POLICY_BLOCKED');
    t.equal(b.error.policyCode, 'CLI_REQUEST_TIER_DENIED');
    t.equal(
      b.message,
      (b.error as { message?: string }).message,
      'gh prints message, az prints error.message: the same text',
    );
    t.match(b.message, /tier write/, 'says what would allow it');
    tls.destroy();
  },
);

const HOST = 'api.example.com';

t.test(
  'a refusal behind a pipelined request goes out after that request’s answer, never as it',
  async (t) => {
    // The child reads answers in the order it asked: a refusal written first would be read as
    // the answer to the POST, which the vendor is carrying out meanwhile.
    const post = `POST /slow HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`;
    const cases: [string, string, string][] = [
      ['a bad head', 'GARBAGE\r\n\r\n', 'CLI_BAD_REQUEST'],
      [
        'an upgrade',
        `GET /ws HTTP/1.1\r\nHost: ${HOST}\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n`,
        'CLI_UPGRADE_REFUSED',
      ],
      [
        'a CONNECT',
        'CONNECT other.example.com:443 HTTP/1.1\r\nHost: other.example.com\r\n\r\n',
        'CLI_TUNNEL_CONNECT_REFUSED',
      ],
      [
        'bad chunk framing in the next body',
        `PUT /next HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`,
        'CLI_BAD_REQUEST',
      ],
    ];
    for (const [name, second, code] of cases) {
      await t.test(name, async (t) => {
        const f = await brokerFixture(t);
        f.upstream.route((_req, res) => {
          setTimeout(() => {
            res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '4' });
            res.end('done');
          }, 200);
        });
        const s = f.session({ tier: 'write' });
        const tls = await openTunnel(s, f.broker.port, HOST);
        const out = await exchange(tls, post + second, (o) => o.includes('done') && o.endsWith('}'));
        tls.destroy();
        t.match(
          out,
          /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\ndoneHTTP\/1\.1 4\d\d /,
          'the POST’s own answer first, then the refusal',
        );
        t.match(out, new RegExp(`"code":"${code}"`));
        t.ok(await until(() => f.events.length === 2), `${f.events.length} events`);
        const [first, refused] = [
          f.events.find((e) => e.path === '/slow'),
          f.events.find((e) => e.path !== '/slow'),
        ];
        t.match(first, { type: 'egress.allowed', status: 200, outcome: 'sent' });
        t.notOk(first && 'abortedBy' in first, 'the POST was not cut off');
        t.match(refused, {
          type: 'egress.blocked',
          code,
          outcome: 'not_sent',
          refusalStatus: Number(/^HTTP\/1\.1 200[\s\S]*doneHTTP\/1\.1 (\d+)/.exec(out)?.[1]),
        });
      });
    }
  },
);

t.test('bytes a vendor sends after one session’s response never answer another session', async (t) => {
  // Upstream connections are shared by sessions: a vendor (or anything between it and us)
  // that writes a second, unasked-for response after the first must not have it read as the
  // answer to whichever request the connection carries next.
  const f = await brokerFixture(t);
  let smuggled = 0;
  f.upstream.route((req, res) => {
    if (req.url === '/a') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1' });
      res.end('a');
      smuggled++;
      res.socket?.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 8\r\n\r\nSMUGGLED');
      return;
    }
    const body = `own ${req.url}`;
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(body.length) });
    res.end(body);
  });
  const a = f.session({ tier: 'write' });
  const b = f.session({ tier: 'write' });
  for (let round = 0; round < 3; round++) {
    const ta = await openTunnel(a, f.broker.port, HOST);
    const outA = await exchange(ta, `GET /a HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`, (o) =>
      o.endsWith('\r\n\r\na'),
    );
    ta.destroy();
    t.match(outA, /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\na$/, `round ${round}: session a got its own answer`);
    const tb = await openTunnel(b, f.broker.port, HOST);
    const outB = await exchange(
      tb,
      `GET /b${round} HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`,
      (o) => o.endsWith(`own /b${round}`) || o.includes('SMUGGLED'),
    );
    tb.destroy();
    t.notMatch(outB, /SMUGGLED/, `round ${round}: session b never saw the leftover response`);
    t.match(outB, new RegExp(`\\r\\n\\r\\nown /b${round}$`), `round ${round}: session b got its own answer`);
  }
  t.equal(smuggled, 3);
  t.ok(await until(() => f.events.length === 6), 'every request audited');
  t.ok(
    f.events.every((e) => e.type === 'egress.allowed' && e.status === 200),
    'all six answered by the vendor',
  );
});

t.test(
  'a vendor response with ambiguous framing is refused to the child, and the next request is answered',
  async (t) => {
    const f = await brokerFixture(t);
    const bad: Record<string, string> = {
      '/both': 'HTTP/1.1 200 OK\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n',
      '/twice': 'HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 5\r\n\r\nhello',
      '/switch': 'HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n',
    };
    f.upstream.route((req, res) => {
      const raw = bad[req.url ?? ''];
      if (raw) {
        res.socket?.write(raw);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      res.end('ok');
    });
    const s = f.session({ tier: 'write' });
    for (const path of Object.keys(bad)) {
      const tls = await openTunnel(s, f.broker.port, HOST);
      const out = await exchange(tls, `GET ${path} HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`, (o) =>
        o.endsWith('}'),
      );
      tls.destroy();
      t.match(out, /^HTTP\/1\.1 502 /, `${path}: 502 to the child`);
      t.match(out, /"code":"UPSTREAM_UNAVAILABLE"/);
      t.notMatch(out, /hello|websocket/i, `${path}: nothing of the vendor's answer reached the child`);
      const again = await openTunnel(s, f.broker.port, HOST);
      const next = await exchange(again, `GET /fine HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`, (o) =>
        o.endsWith('\r\n\r\nok'),
      );
      again.destroy();
      t.match(next, /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nok$/, `${path}: the next request is answered`);
    }
    t.ok(await until(() => f.events.length === 6), 'every request audited');
    const refused = f.events.filter((e) => e.path !== '/fine');
    t.equal(refused.length, 3);
    for (const e of refused)
      t.match(e, {
        type: 'egress.blocked',
        code: 'UPSTREAM_UNAVAILABLE',
        outcome: 'unknown',
        refusalStatus: 502,
      });
  },
);
