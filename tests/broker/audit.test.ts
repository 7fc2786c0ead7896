/**
 * The audit step: exactly one event per request, whichever phase — inside the tunnel or
 * outside it — ended it, each with its class, and `status` only when the vendor answered.
 */
import t from 'tap';
import type { TunnelEvent } from '../../src/broker/types.js';
import { BrokerError } from '../../src/errors.js';
import { brokerFixture, exchange, openTunnel, proxyAuth, rawConnect, until } from '../helpers/broker.js';
import { curl } from '../helpers/curl.js';

const HOST = 'api.example.com';

t.test('an allowed request: the vendor status, outcome sent, no refusal fields', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session();
  const r = await curl(s, ['https://api.example.com/repos/acme/app']);
  t.equal(r.code, 0, r.stderr);
  t.match(f.events, [
    { type: 'egress.allowed', decision: 'allow', class: 'read', status: 200, outcome: 'sent' },
  ]);
  t.notOk('refusalStatus' in f.events[0]! || 'abortedBy' in f.events[0]! || 'code' in f.events[0]!);
});

t.test(
  'plain-HTTP proxying from an authenticated session is audited and counted against the budget',
  async (t) => {
    const f = await brokerFixture(t);
    const s = f.session({ limits: { maxRequests: 2 } });
    const plain = await curl(s, [
      '-i',
      '--proxy',
      s.proxyUrl,
      'http://api.example.com/repos/acme/app?token=abc',
    ]);
    t.match(plain.stdout, /CLI_PLAIN_HTTP_REFUSED/);
    t.match(f.events, [
      {
        type: 'egress.blocked',
        method: 'GET',
        host: HOST,
        path: '/repos/acme/app',
        class: 'read',
        code: 'CLI_PLAIN_HTTP_REFUSED',
        outcome: 'not_sent',
      },
    ]);
    t.ok(f.events[0]!.refusalStatus! >= 400 && !('status' in f.events[0]!));
    t.equal(s.stats.requests, 1);
    await curl(s, ['--proxy', s.proxyUrl, '-X', 'DELETE', 'http://api.example.com/repos/acme/app']);
    t.match(f.events[1], { class: 'destructive', code: 'CLI_PLAIN_HTTP_REFUSED' });
    const third = await curl(s, ['-i', 'https://api.example.com/x']);
    t.match(third.stdout, /CLI_REQUEST_BUDGET_EXCEEDED/, 'the plain-HTTP requests used the budget up');
    t.equal(f.upstream.received.length, 0);
    t.equal(f.events.length, 3, 'one event per request');
  },
);

t.test('refused before classification: the class is the one the method implies', async (t) => {
  const f = await brokerFixture(t, { hosts: ['api.example.com', 'other.example.com'] });
  const s = f.session({ egress: [HOST], tier: 'write' });
  const tls = await openTunnel(s, f.broker.port, 'other.example.com');
  const want: Record<string, string> = {
    GET: 'read',
    HEAD: 'read',
    OPTIONS: 'read',
    DELETE: 'destructive',
    POST: 'write',
    PUT: 'write',
    PATCH: 'write',
    TRACE: 'write',
  };
  for (const m of Object.keys(want)) {
    const out = await exchange(
      tls,
      `${m} /x HTTP/1.1\r\nHost: other.example.com\r\nContent-Length: 0\r\n\r\n`,
      (o) => (m === 'HEAD' ? /\r\n\r\n$/.test(o) : /\}$/.test(o)),
    );
    t.match(out, /^HTTP\/1\.1 422/, m);
  }
  tls.destroy();
  t.equal(f.events.length, Object.keys(want).length);
  for (const e of f.events) {
    t.match(
      e,
      {
        type: 'egress.blocked',
        policyCode: 'CLI_EGRESS_HOST_DENIED',
        class: want[e.method],
        refusalStatus: 422,
        outcome: 'not_sent',
      },
      e.method,
    );
    t.notOk('status' in e, `${e.method}: no vendor status`);
  }
});

t.test(
  'CONNECT refusals, h2-only clients, upgrades and parse errors: one event each, no status',
  async (t) => {
    const f = await brokerFixture(t);
    const s = f.session();
    const auth = proxyAuth(s.proxyUrl);
    const port80 = await rawConnect(
      f.broker.port,
      `CONNECT ${HOST}:80 HTTP/1.1\r\nProxy-Authorization: ${auth}\r\n\r\n`,
    );
    port80.socket.destroy();
    const ip = await rawConnect(
      f.broker.port,
      `CONNECT 10.0.0.1:443 HTTP/1.1\r\nProxy-Authorization: ${auth}\r\n\r\n`,
    );
    ip.socket.destroy();
    const tls = await openTunnel(s, f.broker.port, HOST, { alpn: ['h2'] }).catch(() => undefined);
    tls?.destroy();
    const t2 = await openTunnel(s, f.broker.port, HOST);
    await exchange(
      t2,
      `GET /ws HTTP/1.1\r\nHost: ${HOST}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
      (o) => /\}$/.test(o),
    );
    const t3 = await openTunnel(s, f.broker.port, HOST);
    await exchange(t3, 'NOT-HTTP\r\n\r\n', (o) => /\}$/.test(o));
    t.ok(await until(() => f.events.length === 5), `${f.events.length} events`);
    t.match(
      f.events.map((e) => [e.code, e.method, e.class, e.outcome]),
      [
        ['CLI_PORT_REFUSED', 'CONNECT', 'write', 'not_sent'],
        ['CLI_HOST_INVALID', 'CONNECT', 'write', 'not_sent'],
        ['CLI_HTTP2_ONLY', 'CONNECT', 'write', 'not_sent'],
        ['CLI_UPGRADE_REFUSED', 'GET', 'read', 'not_sent'],
        ['CLI_BAD_REQUEST', '-', 'write', 'not_sent'],
      ],
    );
    t.ok(f.events.every((e) => e.type === 'egress.blocked' && !('status' in e)));
    t.equal(s.stats.requests, 5, 'each counted once');
    t.equal(s.stats.refused, 5);
  },
);

t.test(
  'a refusal thrown by a hook (decide, the stamper) keeps its shape to the event, once, with the class',
  async (t) => {
    const f = await brokerFixture(t);
    const s = f.session({
      tier: 'write',
      decide: (head) => {
        if (head.target === '/throw')
          throw new BrokerError('CLI_CONFIRMATION_REQUIRED', {
            message: 'CLI_CONFIRMATION_REQUIRED: nobody to ask.',
          });
        return { decision: 'allow', reason: 'ok' };
      },
      credentials: {
        authorizationFor: () => {
          throw new BrokerError('CREDENTIAL_TOKEN_MINT_FAILED', {
            message: 'CREDENTIAL_TOKEN_MINT_FAILED: provider said no.',
          });
        },
      },
    });
    const tls = await openTunnel(s, f.broker.port, HOST);
    const a = await exchange(tls, `DELETE /throw HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`, (o) => /\}$/.test(o));
    const b = await exchange(tls, `POST /stamp HTTP/1.1\r\nHost: ${HOST}\r\nContent-Length: 0\r\n\r\n`, (o) =>
      /\}$/.test(o),
    );
    tls.destroy();
    t.match(a, /CLI_CONFIRMATION_REQUIRED/);
    t.match(b, /CREDENTIAL_TOKEN_MINT_FAILED/);
    t.match(f.events, [
      {
        type: 'egress.blocked',
        code: 'CLI_CONFIRMATION_REQUIRED',
        class: 'destructive',
        reason: 'CLI_CONFIRMATION_REQUIRED: nobody to ask.',
        outcome: 'not_sent',
      },
      {
        type: 'egress.blocked',
        code: 'CREDENTIAL_TOKEN_MINT_FAILED',
        class: 'write',
        refusalStatus: 401,
        outcome: 'not_sent',
      },
    ]);
    t.equal(f.events.length, 2);
    t.equal(f.upstream.received.length, 0);
  },
);

t.test(
  'the credential bootstrap answer is the broker’s own: refusalStatus, never status, nothing sent',
  async (t) => {
    const f = await brokerFixture(t);
    const s = f.session({
      credentials: {
        authorizationFor: () => undefined,
        intercept: (head) =>
          head.target === '/token'
            ? {
                status: 200,
                headers: { 'content-type': 'application/json' },
                body: '{"access_token":"placeholder"}',
              }
            : head.target === '/denied'
              ? {
                  status: 403,
                  headers: { 'content-type': 'application/json' },
                  body: '{}',
                  refusal: {
                    code: 'POLICY_BLOCKED',
                    policyCode: 'CLI_EGRESS_HOST_DENIED',
                    reason: 'not here',
                  },
                }
              : undefined,
      },
    });
    const tls = await openTunnel(s, f.broker.port, HOST);
    await exchange(tls, `GET /token HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`, (o) => /\}$/.test(o));
    await exchange(tls, `GET /denied HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`, (o) => /\}$/.test(o));
    tls.destroy();
    t.match(f.events, [
      { type: 'egress.allowed', refusalStatus: 200, outcome: 'not_sent' },
      {
        type: 'egress.blocked',
        code: 'POLICY_BLOCKED',
        policyCode: 'CLI_EGRESS_HOST_DENIED',
        reason: 'not here',
        refusalStatus: 403,
        outcome: 'not_sent',
      },
    ]);
    t.ok(f.events.every((e) => !('status' in e)));
  },
);

t.test('a mixed sequence: as many events as requests, each counted once', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session({ limits: { maxRequests: 6 } });
  for (const args of [
    ['https://api.example.com/a'],
    ['-X', 'POST', 'https://api.example.com/b'],
    ['--proxy', s.proxyUrl, 'http://api.example.com/c'],
    ['https://api.example.com/d'],
  ])
    await curl(s, args);
  const port = await rawConnect(
    f.broker.port,
    `CONNECT ${HOST}:8443 HTTP/1.1\r\nProxy-Authorization: ${proxyAuth(s.proxyUrl)}\r\n\r\n`,
  );
  port.socket.destroy();
  t.ok(await until(() => f.events.length === 5));
  t.equal(s.stats.requests, 5);
  t.same(
    f.events.map((e) => e.type),
    ['egress.allowed', 'egress.blocked', 'egress.blocked', 'egress.allowed', 'egress.blocked'],
  );
});

t.test(
  'a parse error is one request: bytes the child keeps sending after it are not more events',
  async (t) => {
    // llhttp stays failed after an error and node reports every later chunk as a new one.
    const f = await brokerFixture(t);
    const s = f.session();
    for (const junk of [
      'GARBAGE\r\n\r\n',
      `POST /x HTTP/1.1\r\nHost: ${HOST}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`,
    ]) {
      const tls = await openTunnel(s, f.broker.port, HOST);
      let got = '';
      tls.on('data', (c: Buffer) => (got += c.toString('latin1')));
      tls.on('error', () => {});
      const before = f.events.length;
      tls.write(junk);
      for (let i = 0; i < 5; i++) tls.write('MORE JUNK\r\n\r\n');
      t.ok(await until(() => tls.destroyed || tls.readableEnded));
      await until(() => f.events.length > before + 1, 300); // a second event would show up here
      t.equal(f.events.length, before + 1, `one event for ${JSON.stringify(junk.slice(0, 12))}`);
      t.match(
        got,
        /^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*"code":"CLI_BAD_REQUEST"/,
        'the child got its refusal',
      );
      tls.destroy();
    }
    t.equal(s.stats.requests, f.events.length, 'counted once each');
  },
);

t.test(
  'a refusal decided after the child left was never answered: no refusalStatus, recorded as the child’s leaving',
  async (t) => {
    const f = await brokerFixture(t);
    let closed = false;
    const s = f.session({
      tier: 'write',
      // A person is asked; the child gives up waiting before the answer (no).
      decide: async () => {
        await until(() => closed);
        await new Promise((r) => setTimeout(r, 20));
        return {
          decision: 'deny',
          code: 'CLI_CONFIRMATION_REQUIRED',
          reason: 'CLI_CONFIRMATION_REQUIRED: nobody approved it.',
        };
      },
    });
    const tls = await openTunnel(s, f.broker.port, HOST);
    tls.write(`DELETE /x HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`);
    t.ok(await until(() => s.stats.requests === 1));
    tls.destroy();
    closed = true;
    t.ok(await until(() => f.events.length === 1));
    t.match(f.events[0], {
      type: 'egress.blocked',
      code: 'CLI_CONFIRMATION_REQUIRED',
      class: 'destructive',
      outcome: 'not_sent',
      abortedBy: 'child',
    });
    t.notOk('refusalStatus' in f.events[0]!, 'the child never got an answer');
  },
);

t.test(
  'a hook that names a code outside the catalogue (or a 5xx one) neither crashes the broker nor answers a policy refusal with a 5xx',
  async (t) => {
    const f = await brokerFixture(t);
    const deny = (code: string) =>
      f.session({
        tier: 'write',
        decide: async () => ({
          decision: 'deny',
          code: code as never,
          policyCode: 'NOT_A_CODE' as never,
          reason: `denied as ${code}`,
        }),
      });
    for (const [code, status] of [
      ['NOT_A_CODE', 422],
      ['UPSTREAM_UNAVAILABLE', 422],
      ['CLI_TLS_HANDSHAKE_TIMEOUT', 422],
      ['CLI_CONFIRMATION_REQUIRED', 422],
      ['CLI_PROXY_AUTH_REQUIRED', 407],
    ] as const) {
      const s = deny(code);
      const tls = await openTunnel(s, f.broker.port, HOST);
      const out = await exchange(tls, `DELETE /x HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`, (o) => o.endsWith('}'));
      tls.destroy();
      t.equal(Number(/^HTTP\/1\.1 (\d+)/.exec(out)?.[1]), status, `${code}: ${out.split('\r\n')[0]}`);
    }
    const stamper = f.session({
      credentials: {
        authorizationFor: () => {
          throw new BrokerError('NOT_A_CODE' as never, { message: 'odd' });
        },
      },
    });
    const tls = await openTunnel(stamper, f.broker.port, HOST);
    const out = await exchange(tls, `GET /x HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`, (o) => o.endsWith('}'));
    tls.destroy();
    t.match(
      out,
      /^HTTP\/1\.1 500 [\s\S]*"code":"INTERNAL_ERROR"/,
      'a stamper’s uncoded failure is an internal error',
    );
    t.ok(await until(() => f.events.length === 6), `one event each (${f.events.length})`);
    t.equal(f.upstream.received.length, 0);
  },
);

t.test(
  'an Expect other than 100-continue is a coded refusal, audited and counted (node would answer 417 itself, unseen)',
  async (t) => {
    const f = await brokerFixture(t);
    const s = f.session({ tier: 'write' });
    const tls = await openTunnel(s, f.broker.port, HOST);
    for (const [method, expect] of [
      ['GET', '200-ok'],
      ['POST', '100-continue, foo'],
    ] as const) {
      const body = method === 'POST' ? 'Content-Length: 2\r\n\r\n{}' : '\r\n';
      const out = await exchange(
        tls,
        `${method} /x HTTP/1.1\r\nHost: ${HOST}\r\nExpect: ${expect}\r\n${body}`,
        (o) => o.endsWith('}'),
      );
      t.match(
        out,
        /^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*"code":"CLI_BAD_REQUEST"/,
        `${method} Expect: ${expect}`,
      );
    }
    tls.destroy();
    t.ok(await until(() => f.events.length === 2), `${f.events.length} events`);
    t.match(f.events, [
      {
        type: 'egress.blocked',
        code: 'CLI_BAD_REQUEST',
        refusalStatus: 400,
        outcome: 'not_sent',
        class: 'read',
      },
      {
        type: 'egress.blocked',
        code: 'CLI_BAD_REQUEST',
        refusalStatus: 400,
        outcome: 'not_sent',
        class: 'write',
      },
    ]);
    t.equal(s.stats.requests, 2, 'counted against the budget');
    t.equal(f.upstream.received.length, 0);
  },
);

t.test('plain-HTTP proxying with an Expect header is audited and counted like any other', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session();
  for (const expect of ['200-ok', '100-continue']) {
    const r = await rawConnect(
      f.broker.port,
      `POST http://${HOST}/x HTTP/1.1\r\nHost: ${HOST}\r\nProxy-Authorization: ${proxyAuth(s.proxyUrl)}\r\nExpect: ${expect}\r\nContent-Length: 2\r\n\r\n`,
    );
    r.socket.destroy();
    t.match(r.head, /^HTTP\/1\.1 4\d\d /, `Expect: ${expect}: ${r.head.split('\r\n')[0]}`);
    t.notMatch(r.head, /^HTTP\/1\.1 100/, 'the child is not asked for a body that is refused anyway');
  }
  t.ok(await until(() => f.events.length === 2), `${f.events.length} events`);
  t.ok(f.events.every((e) => e.code === 'CLI_PLAIN_HTTP_REFUSED' && e.class === 'write'));
  t.equal(s.stats.requests, 2);
});

t.test(
  'with nothing listening no event is built, yet every request is counted; a late channel subscriber gets the next',
  async (t) => {
    const { subscribe, unsubscribe } = await import('node:diagnostics_channel');
    const f = await brokerFixture(t, { broker: { logger: undefined, onAudit: undefined } });
    const s = f.session();
    t.equal((await curl(s, ['https://api.example.com/a'])).code, 0);
    t.match((await curl(s, ['-X', 'DELETE', 'https://api.example.com/b'])).stdout, /CLI_REQUEST_TIER_DENIED/);
    t.equal(s.stats.requests, 2, 'both counted');
    t.equal(s.stats.refused, 1, 'the DELETE refused at tier read');
    t.ok(s.stats.bytesDown > 0, 'bytes counted');
    t.same(f.events, [], 'no sink was attached');

    const seen: unknown[] = [];
    const onEvent = (e: unknown) => seen.push(e);
    subscribe('clibroker:egress', onEvent);
    t.teardown(() => unsubscribe('clibroker:egress', onEvent));
    t.equal((await curl(s, ['https://api.example.com/c'])).code, 0);
    t.match(
      seen,
      [{ type: 'egress.allowed', path: '/c', session: s.id }],
      'the subscriber sees the next request',
    );
  },
);

/** A host the child made up with a token in it: 40 random lower-case letters and digits as a label. */
const SECRET_LABEL = 'k7x2m9q4w8e1r5t3y6u0i2o9p4a7s1d3f8g5h2j6';
const SECRET_HOST = `${SECRET_LABEL}.example.com`;

t.test(
  'a secret-shaped host label never reaches an event: forwarded, refused in-band, refused at CONNECT',
  async (t) => {
    const tunnels: TunnelEvent[] = [];
    const token = 'ghp_0123456789abcdefghijklmnopqrstuvwxyzAB';
    // the leak guard fails the test at teardown if either label reaches an event or a log line
    const f = await brokerFixture(t, {
      hosts: [HOST, SECRET_HOST],
      broker: { onTunnel: (e) => tunnels.push(e) },
      secrets: [SECRET_LABEL, token, token.toLowerCase()],
    });
    const allowed = f.session({ egress: [SECRET_HOST] });
    const ok = await curl(allowed, [`https://${SECRET_HOST}/repos`]);
    t.equal(ok.code, 0, ok.stderr);
    t.equal(f.upstream.received.length, 1, 'forwarded: the vendor saw the real host');
    t.equal(f.upstream.received[0]!.host, SECRET_HOST);

    const s = f.session({ egress: [HOST] });
    const denied = await curl(s, ['--write-out', '\n%{http_code}', `https://${SECRET_HOST}/repos`]);
    t.match(denied.stdout, /CLI_EGRESS_HOST_DENIED[\s\S]*\n422$/, 'refused in-band');
    t.match(denied.stdout, SECRET_LABEL, 'the child is told the host it asked for');

    const connect = await rawConnect(
      f.broker.port,
      `CONNECT ${token}.example.com:443 HTTP/1.1\r\nHost: ${token}.example.com:443\r\nProxy-Authorization: ${proxyAuth(s.proxyUrl)}\r\n\r\n`,
    );
    connect.socket.destroy();
    t.match(connect.head, /^HTTP\/1\.1 400 /, 'an underscore is no DNS name: refused at CONNECT');

    t.ok(await until(() => f.events.length === 3 && tunnels.length === 2), `${f.events.length} events`);
    t.match(f.events, [
      { type: 'egress.allowed', host: '{redacted}.example.com', status: 200 },
      { type: 'egress.blocked', host: '{redacted}.example.com', policyCode: 'CLI_EGRESS_HOST_DENIED' },
      { type: 'egress.blocked', host: '{redacted}.example.com', code: 'CLI_HOST_INVALID', method: 'CONNECT' },
    ]);
    t.match(f.events[1]!.reason, /\{redacted\}\.example\.com/, 'the message echoes the host redacted');
    t.same(
      tunnels.map((e) => e.host),
      ['{redacted}.example.com', '{redacted}.example.com'],
      'tunnel events too',
    );
    const text = JSON.stringify([f.events, tunnels]);
    t.notMatch(text, SECRET_LABEL);
    t.notMatch(text, /ghp_/i);
  },
);
