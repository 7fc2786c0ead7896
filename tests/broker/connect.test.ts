import t from 'tap';
import { brokerFixture, openTunnel, proxyAuth, rawConnect, until } from '../helpers/broker.js';
import { curl } from '../helpers/curl.js';

t.test('CONNECT handling', async (t) => {
  const f = await brokerFixture(t, { hosts: ['api.example.com', 'other.example.com'] });
  const s = f.session({ egress: ['api.example.com'] });
  const auth = proxyAuth(s.proxyUrl);

  const cases: Record<string, { head: string; status: RegExp; code?: string }> = {
    'curl-style CONNECT with Host and port': {
      head: `CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\nProxy-Authorization: ${auth}\r\n\r\n`,
      status: /^HTTP\/1\.1 200/,
    },
    'python-style HTTP/1.0 CONNECT with no Host header': {
      head: `CONNECT api.example.com:443 HTTP/1.0\r\nProxy-Authorization: ${auth}\r\n\r\n`,
      status: /^HTTP\/1\.1 200/,
    },
    'undici-style Host without a port': {
      head: `CONNECT api.example.com:443 HTTP/1.1\r\nhost: api.example.com\r\nProxy-Authorization: ${auth}\r\nconnection: close\r\n\r\n`,
      status: /^HTTP\/1\.1 200/,
    },
    'upper-case host is normalised': {
      head: `CONNECT API.Example.COM:443 HTTP/1.1\r\nProxy-Authorization: ${auth}\r\n\r\n`,
      status: /^HTTP\/1\.1 200/,
    },
    'no proxy credentials': {
      head: 'CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n',
      status: /^HTTP\/1\.1 407 Proxy Authentication Required/,
      code: 'CLI_PROXY_AUTH_REQUIRED',
    },
    'wrong secret': {
      head: `CONNECT api.example.com:443 HTTP/1.1\r\nProxy-Authorization: Basic ${Buffer.from(`${new URL(s.proxyUrl).username}:nope`).toString('base64')}\r\n\r\n`,
      status: /^HTTP\/1\.1 407/,
      code: 'CLI_PROXY_AUTH_REQUIRED',
    },
    'port other than 443': {
      head: `CONNECT api.example.com:8443 HTTP/1.1\r\nProxy-Authorization: ${auth}\r\n\r\n`,
      status: /^HTTP\/1\.1 403 Forbidden/,
      code: 'CLI_PORT_REFUSED',
    },
    'IPv4 literal': {
      head: `CONNECT 127.0.0.1:443 HTTP/1.1\r\nProxy-Authorization: ${auth}\r\n\r\n`,
      status: /^HTTP\/1\.1 400 Bad Request/,
      code: 'CLI_HOST_INVALID',
    },
    'IPv6 literal': {
      head: `CONNECT [::1]:443 HTTP/1.1\r\nProxy-Authorization: ${auth}\r\n\r\n`,
      status: /^HTTP\/1\.1 400/,
      code: 'CLI_HOST_INVALID',
    },
    'no port': {
      head: `CONNECT api.example.com HTTP/1.1\r\nProxy-Authorization: ${auth}\r\n\r\n`,
      status: /^HTTP\/1\.1 400/,
      code: 'CLI_HOST_INVALID',
    },
    'garbage target': {
      head: `CONNECT /etc/passwd HTTP/1.1\r\nProxy-Authorization: ${auth}\r\n\r\n`,
      status: /^HTTP\/1\.1 400/,
      code: 'CLI_HOST_INVALID',
    },
    'trailing-dot host': {
      head: `CONNECT api.example.com.:443 HTTP/1.1\r\nProxy-Authorization: ${auth}\r\n\r\n`,
      status: /^HTTP\/1\.1 400/,
      code: 'CLI_HOST_INVALID',
    },
    'userinfo smuggled into the authority': {
      head: `CONNECT evil.com@api.example.com:443 HTTP/1.1\r\nProxy-Authorization: ${auth}\r\n\r\n`,
      status: /^HTTP\/1\.1 400/,
      code: 'CLI_HOST_INVALID',
    },
  };
  for (const [name, c] of Object.entries(cases)) {
    await t.test(name, async (t) => {
      const { head, socket, rest } = await rawConnect(f.broker.port, c.head);
      t.match(head, c.status);
      if (c.code) {
        t.match(head, /content-type: application\/json/i);
        const body = rest.length
          ? rest.toString()
          : await new Promise<string>((r) => {
              let b = '';
              socket.on('data', (d) => (b += d));
              socket.on('end', () => r(b));
            });
        t.equal(JSON.parse(body).error.code, c.code);
      }
      socket.destroy();
    });
  }
  t.equal(f.upstream.received.length, 0, 'no CONNECT case reached upstream');
  const blocked = f.events.filter((e) => e.method === 'CONNECT');
  t.same(
    blocked.map((e) => e.code).sort(),
    [
      'CLI_HOST_INVALID',
      'CLI_HOST_INVALID',
      'CLI_HOST_INVALID',
      'CLI_HOST_INVALID',
      'CLI_HOST_INVALID',
      'CLI_HOST_INVALID',
      'CLI_PORT_REFUSED',
    ],
    'each refused CONNECT with a session is audited',
  );
});

t.test('real curl: 407 without session credentials', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session();
  const r = await curl({ proxyUrl: f.broker.url, caCertPem: s.caCertPem }, ['https://api.example.com/x']);
  t.equal(r.code, 56);
  t.match(r.stderr, /CONNECT tunnel failed, response 407/);
  t.equal(f.upstream.received.length, 0);
});

t.test('real curl: plain-HTTP absolute-form proxying is refused', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session();
  const r = await curl(s, ['-x', s.proxyUrl, '-i', 'http://api.example.com/x?token=abc']);
  t.match(r.stdout, /^HTTP\/1\.1 403 Forbidden/);
  t.match(r.stdout, /CLI_PLAIN_HTTP_REFUSED/);
  t.notMatch(r.stdout, /token=abc/, 'the query is not echoed');
  t.equal(f.upstream.received.length, 0);
});

t.test('name-constrained session CA refuses other hosts at CONNECT', async (t) => {
  const f = await brokerFixture(t, { hosts: ['api.example.com', 'other.example.com'] });
  const s = f.session({ egress: ['api.example.com'], nameConstrainedCa: true });
  t.not(s.caCertPem, f.broker.caCertPem, 'the session has its own CA');
  const ok = await curl(s, ['https://api.example.com/ok']);
  t.equal(ok.code, 0, ok.stderr);
  const denied = await curl(s, ['https://other.example.com/x']);
  t.equal(denied.code, 56);
  t.match(denied.stderr, /response 422/);
  t.equal(f.upstream.received.length, 1);
});

t.test('h2-only client is refused and the refusal recorded; curl falls back to http/1.1', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session();
  await t.rejects(
    openTunnel(s, f.broker.port, 'api.example.com', { alpn: ['h2'] }),
    /no application protocol|alert/i,
  );
  t.ok(await until(() => f.events.find((e) => e.code === 'CLI_HTTP2_ONLY')), 'CLI_HTTP2_ONLY audited');
  const r = await curl(s, ['-v', 'https://api.example.com/h']);
  t.equal(r.code, 0);
  t.match(r.stderr, /ALPN: offers h2/);
  t.match(r.stderr, /ALPN: server accepted http\/1\.1/);
  t.equal(JSON.parse(r.stdout).url, '/h');
});

t.test("one leaf covers a session's egress set; a host outside it gets its own", async (t) => {
  const f = await brokerFixture(t, { hosts: ['api.example.com', 'other.example.com', 'third.example.com'] });
  const s = f.session({ egress: ['api.example.com', 'other.example.com'] });
  const san = async (host: string): Promise<string> => {
    const tls = await openTunnel(s, f.broker.port, host);
    const cert = tls.getPeerCertificate();
    tls.destroy();
    return `${cert.serialNumber} ${cert.subjectaltname}`;
  };
  const a = await san('api.example.com');
  const b = await san('other.example.com');
  t.equal(a, b, 'the same certificate for both egress hosts');
  t.match(a, /DNS:api\.example\.com, DNS:other\.example\.com$/);
  const outside = await san('third.example.com');
  t.not(outside, a);
  t.match(outside, /DNS:third\.example\.com$/, 'a host outside egress gets a leaf naming only itself');
  const again = f.session({ egress: ['other.example.com', 'api.example.com'] });
  const tls = await openTunnel(again, f.broker.port, 'api.example.com');
  t.equal(
    `${tls.getPeerCertificate().serialNumber} ${tls.getPeerCertificate().subjectaltname}`,
    a,
    'sessions with the same egress set share it',
  );
  tls.destroy();
});
