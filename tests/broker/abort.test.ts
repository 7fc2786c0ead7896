/**
 * Requests cut off by either side: the child closing its socket in every state of `forward`,
 * the vendor failing before or during its answer, and the session ending at its deadline.
 * Each is audited once, at once, as what truly happened, and never holds an upstream
 * connection after its child is gone.
 */
import type { ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import t, { type Test } from 'tap';
import type { AuditEvent } from '../../src/broker/types.js';
import {
  brokerFixture,
  brokerToVendor,
  exchange,
  type Fixture,
  openTunnel,
  until,
} from '../helpers/broker.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';

const HOST = 'api.example.com';

/** Routes /hold* to a response that never comes (counted, with how many the broker closed); the rest echo. */
function holdRoute(upstream: Upstream): {
  held: () => number;
  closed: () => number;
  open: Set<ServerResponse>;
} {
  let held = 0;
  let closed = 0;
  const open = new Set<ServerResponse>();
  upstream.route((req, res, body) => {
    if (req.url?.startsWith('/hold')) {
      held++;
      open.add(res);
      res.on('close', () => {
        closed++;
        open.delete(res);
      });
      if (req.url.startsWith('/hold-head')) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
      }
      return;
    }
    const out = JSON.stringify({ method: req.method, url: req.url, bytes: body.length });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  });
  return { held: () => held, closed: () => closed, open };
}

/** brokerFixture with a smaller upstream pool. */
async function poolFixture(t: Test, connections: number): Promise<Fixture> {
  const upstream = await startUpstream([HOST]);
  const f = await brokerFixture(t, {
    broker: {
      upstream: {
        ca: upstream.pki.caPem,
        resolve: upstream.resolve,
        allowAddresses: ['127.0.0.0/8'],
        connections,
      },
    },
  });
  t.teardown(() => upstream.close());
  return { ...f, upstream };
}

const get = (path: string): string => `GET ${path} HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`;

t.test(
  '100 tunnels that send a request and close at once: audited at once, the pool stays free, another session is answered',
  { timeout: 60_000 },
  async (t) => {
    // A pool of 8 connections per origin (32 by default): a few held requests would fill it.
    const f = await poolFixture(t, 8);
    const hold = holdRoute(f.upstream);
    const attacker = f.session({ tier: 'write', limits: { maxTunnels: 200, maxRequests: 200 } });
    const shapes = [
      get('/hold'), // no body: nothing to fail on the child's side, the request would be sent and held
      `HEAD /hold HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`,
      `PATCH /hold HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
      `POST /hold HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/octet-stream\r\nContent-Length: 1024\r\n\r\n${'x'.repeat(1024)}`, // whole body
      `POST /hold HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/octet-stream\r\nContent-Length: 65536\r\n\r\n${'x'.repeat(4096)}`, // mid-upload
      `PUT /hold HTTP/1.1\r\nHost: ${HOST}\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n${'y'.repeat(1024)}\r\n`, // chunked, unfinished
    ];
    // All 100 at once, so most wait in undici's queue for one of the pool's connections (the
    // state before onRequestStart), the rest are upstream, uploading or held; then all close.
    const tunnels: TLSSocket[] = [];
    for (let i = 0; i < 100; i++) tunnels.push(await openTunnel(attacker, f.broker.port, HOST));
    for (const [i, tls] of tunnels.entries()) tls.write(shapes[i % shapes.length]!);
    t.ok(await until(() => hold.held() >= 4), 'the upstream holds some of them');
    await new Promise((r) => setTimeout(r, 100)); // the rest are queued or uploading now (setup, not an assertion)
    for (const tls of tunnels) tls.destroy();
    t.ok(
      await until(() => f.events.length === 100),
      `all 100 audited without waiting for a timeout (${f.events.length})`,
    );
    t.ok(
      f.events.every(
        (e) =>
          e.type === 'egress.allowed' &&
          e.abortedBy === 'child' &&
          e.outcome !== 'sent' &&
          e.code === undefined,
      ),
      'each recorded as cut off by the child, never as the vendor being unreachable',
    );

    // The vendor never answers /hold: a pool connection comes free only when the broker closes
    // the request its child abandoned. Every one is closed, and so the pool is free, with no
    // timeout of the broker's or the vendor's having fired (each audited as cut by the child).
    t.ok(
      await until(() => hold.closed() === hold.held()),
      `every request that reached the upstream was closed (${hold.closed()}/${hold.held()})`,
    );
    t.equal(hold.open.size, 0, 'nothing left pending upstream');

    const other = f.session();
    const tls = await openTunnel(other, f.broker.port, HOST);
    const out = await exchange(tls, get('/ok'), (o) => o.endsWith('}'), 30_000);
    t.match(out, /^HTTP\/1\.1 200/, "another session's request is answered");
    tls.destroy();
  },
);

/** One tunnel, one request written, then the child closes when `when` says so. */
async function cutOff(
  t: Test,
  raw: string,
  when: (f: Awaited<ReturnType<typeof brokerFixture>>, tls: TLSSocket, got: () => string) => Promise<unknown>,
): Promise<AuditEvent> {
  const f = await brokerFixture(t);
  const hold = holdRoute(f.upstream);
  const s = f.session({ tier: 'write' });
  const tls = await openTunnel(s, f.broker.port, HOST);
  let got = '';
  tls.on('data', (c: Buffer) => (got += c.toString('latin1')));
  tls.write(raw);
  await when(f, tls, () => got);
  tls.destroy();
  t.ok(await until(() => f.events.length === 1), 'audited once');
  t.ok(await until(() => hold.closed() === hold.held()), 'the upstream request was closed too');
  t.equal(f.events.length, 1);
  return f.events[0]!;
}

t.test('the child closes in every state of forward: recorded as its doing, never UPSTREAM_*', async (t) => {
  await t.test('after the request went upstream, before any answer: outcome unknown', async (t) => {
    const e = await cutOff(t, get('/hold'), (f) => until(() => f.upstream.received.length === 1));
    t.match(e, {
      type: 'egress.allowed',
      decision: 'allow',
      class: 'read',
      outcome: 'unknown',
      abortedBy: 'child',
    });
    t.notOk('status' in e || 'refusalStatus' in e || 'code' in e);
  });
  await t.test('mid-upload: outcome unknown or not_sent, never sent', async (t) => {
    const raw = `POST /hold HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/octet-stream\r\nContent-Length: 1048576\r\n\r\n${'z'.repeat(65536)}`;
    const e = await cutOff(t, raw, async () => {});
    t.match(e, { type: 'egress.allowed', class: 'write', abortedBy: 'child' }, JSON.stringify(e));
    t.ok(e.outcome === 'unknown' || e.outcome === 'not_sent', e.outcome);
  });
  await t.test('mid-response, after the vendor answered: outcome sent with its status', async (t) => {
    const e = await cutOff(t, get('/hold-head'), (_f, _tls, got) => until(() => got().includes('partial')));
    t.match(e, { type: 'egress.allowed', outcome: 'sent', status: 200, abortedBy: 'child' });
    t.ok(e.responseBytes > 0);
  });
  await t.test('paused on drain (the child stopped reading a large answer)', async (t) => {
    const f = await brokerFixture(t);
    let closed = false;
    f.upstream.route((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 1);
      const pump = (): void => {
        while (res.write(chunk));
        res.once('drain', pump);
      };
      res.on('close', () => (closed = true));
      pump();
    });
    const s = f.session();
    const tls = await openTunnel(s, f.broker.port, HOST);
    tls.pause(); // never reads: the broker's writes back up and it pauses upstream
    tls.write(get('/big'));
    t.ok(await until(() => f.upstream.received.length === 1));
    await new Promise((r) => setTimeout(r, 200)); // let the pipes fill (setup, not an assertion)
    tls.destroy();
    t.ok(await until(() => f.events.length === 1), 'audited at once');
    t.ok(await until(() => closed), 'the upstream response was closed');
    t.match(f.events[0], { type: 'egress.allowed', outcome: 'sent', status: 200, abortedBy: 'child' });
  });
});

t.test(
  'the vendor fails: before it answered the broker answers 502 (blocked), after it answered the status stays',
  async (t) => {
    await t.test(
      'reset after the request was written: blocked, outcome unknown, abortedBy upstream',
      async (t) => {
        const f = await brokerFixture(t);
        f.upstream.route((req) => req.socket.destroy());
        const s = f.session({ tier: 'write' });
        const tls = await openTunnel(s, f.broker.port, HOST);
        const out = await exchange(
          tls,
          `POST /x HTTP/1.1\r\nHost: ${HOST}\r\nContent-Length: 2\r\n\r\nab`,
          (o) => o.endsWith('}'),
        );
        t.match(out, /^HTTP\/1\.1 502/);
        t.ok(await until(() => f.events.length === 1));
        t.match(f.events[0], {
          type: 'egress.blocked',
          decision: 'deny',
          code: 'UPSTREAM_UNAVAILABLE',
          refusalStatus: 502,
          outcome: 'unknown',
          abortedBy: 'upstream',
        });
        t.match(out, /whether it was carried out is unknown/, 'the child is not told it was not sent');
        t.notOk('status' in f.events[0]!);
        tls.destroy();
      },
    );
    await t.test('reset mid-response: allowed, the vendor status kept, abortedBy upstream', async (t) => {
      const f = await brokerFixture(t);
      f.upstream.route((req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' });
        res.write('only part', () => setTimeout(() => req.socket.destroy(), 20));
      });
      const s = f.session();
      const tls = await openTunnel(s, f.broker.port, HOST);
      await exchange(tls, get('/x'), () => false, 3000);
      t.ok(await until(() => f.events.length === 1));
      t.match(f.events[0], {
        type: 'egress.allowed',
        decision: 'allow',
        status: 200,
        outcome: 'sent',
        abortedBy: 'upstream',
        code: 'UPSTREAM_UNAVAILABLE',
        reason: /response was cut off/,
      });
      t.notOk('refusalStatus' in f.events[0]!);
    });
    await t.test(
      'a response delivered in full, then the vendor closes: allowed and sent, nothing else',
      async (t) => {
        const f = await brokerFixture(t);
        f.upstream.route((req, res) => {
          res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '4', connection: 'close' });
          res.end('done', () => req.socket.destroy());
        });
        const s = f.session();
        const tls = await openTunnel(s, f.broker.port, HOST);
        const out = await exchange(tls, get('/x'), (o) => o.endsWith('done'));
        tls.destroy(); // the child goes away right after the last byte, too
        t.match(out, /^HTTP\/1\.1 200/);
        t.ok(await until(() => f.events.length === 1));
        await new Promise((r) => setTimeout(r, 100)); // a late second event would show up here
        t.equal(f.events.length, 1);
        t.match(f.events[0], { type: 'egress.allowed', status: 200, outcome: 'sent' });
        t.notOk('abortedBy' in f.events[0]! || 'code' in f.events[0]!);
      },
    );
  },
);

t.test(
  'a request in flight when the session ends is recorded as cut by the deadline, never as the vendor being unreachable',
  async (t) => {
    await t.test('the deadline passes: CLI_TIMEOUT', async (t) => {
      const f = await brokerFixture(t);
      const hold = holdRoute(f.upstream);
      const s = f.session({ limits: { deadlineMs: 400 } });
      const tls = await openTunnel(s, f.broker.port, HOST);
      tls.write(get('/hold'));
      t.ok(await until(() => s.closed));
      t.ok(await until(() => f.events.length === 1));
      t.match(f.events[0], {
        type: 'egress.allowed',
        decision: 'allow',
        outcome: 'unknown',
        abortedBy: 'deadline',
        code: 'CLI_TIMEOUT',
      });
      t.ok(await until(() => hold.closed() === 1), 'the upstream request was closed');
    });
    await t.test('the host closes the session: CLI_SESSION_CLOSED', async (t) => {
      const f = await brokerFixture(t);
      const hold = holdRoute(f.upstream);
      const s = f.session();
      const tls = await openTunnel(s, f.broker.port, HOST);
      tls.write(get('/hold'));
      t.ok(await until(() => hold.held() === 1));
      s.close();
      t.ok(await until(() => f.events.length === 1));
      t.match(f.events[0], {
        type: 'egress.allowed',
        outcome: 'unknown',
        abortedBy: 'deadline',
        code: 'CLI_SESSION_CLOSED',
      });
      t.ok(await until(() => hold.closed() === 1));
    });
  },
);

t.test('a vendor that cannot be reached: blocked 502, outcome not_sent, told it was not sent', async (t) => {
  const { createBroker } = await import('../../src/broker/broker.js');
  const events: AuditEvent[] = [];
  const broker = await createBroker({
    upstream: { resolve: () => ({ host: '127.0.0.1', port: 1 }), allowAddresses: ['127.0.0.0/8'] },
    onAudit: (e) => events.push(e),
  });
  t.teardown(() => broker.close());
  const s = broker.openSession({ egress: [HOST] });
  const tls = await openTunnel(s, broker.port, HOST);
  const out = await exchange(tls, get('/x'), (o) => o.endsWith('}'));
  tls.destroy();
  t.match(out, /^HTTP\/1\.1 502/);
  t.match(out, /the request was not sent/);
  t.match(events, [
    { type: 'egress.blocked', code: 'UPSTREAM_UNAVAILABLE', refusalStatus: 502, outcome: 'not_sent' },
  ]);
  t.notOk('abortedBy' in events[0]! || 'status' in events[0]!);
});

t.test(
  'a real curl killed (SIGKILL) while its upload is held upstream: recorded as the child’s doing, the upstream request closed',
  async (t) => {
    const { spawn } = await import('node:child_process');
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const f = await brokerFixture(t);
    const hold = holdRoute(f.upstream);
    const s = f.session({ tier: 'write' });
    const dir = mkdtempSync(join(tmpdir(), 'clibroker-kill-'));
    writeFileSync(join(dir, 'ca.pem'), s.caCertPem);
    const child = spawn(
      'curl',
      ['--silent', '-X', 'POST', '--data-binary', 'payload', 'https://api.example.com/hold'],
      {
        env: {
          PATH: '/usr/bin:/bin',
          HOME: dir,
          HTTPS_PROXY: s.proxyUrl,
          CURL_CA_BUNDLE: join(dir, 'ca.pem'),
        },
        stdio: 'ignore',
      },
    );
    const exited = new Promise((r) => child.once('exit', r));
    t.ok(await until(() => hold.held() === 1), 'the request reached the vendor');
    child.kill('SIGKILL');
    await exited;
    t.ok(await until(() => f.events.length === 1), 'audited at once');
    t.match(f.events[0], {
      type: 'egress.allowed',
      decision: 'allow',
      method: 'POST',
      class: 'write',
      outcome: 'unknown',
      abortedBy: 'child',
    });
    t.notOk('code' in f.events[0]!, 'not UPSTREAM_*');
    t.ok(await until(() => hold.closed() === 1), 'the held upstream request was closed');
  },
);

t.test(
  'pipelined requests: a close cuts every request the tunnel still owes an answer, not only the one on the wire',
  async (t) => {
    // node hands the socket only to the first response; the ones queued behind it never see
    // its close. Their upstream requests must be aborted and audited at once all the same.
    for (const second of ['/hold', '/stream']) {
      await t.test(`behind a held request: GET ${second}`, async (t) => {
        const f = await brokerFixture(t);
        const open = new Set<ServerResponse>();
        f.upstream.route((req, res) => {
          open.add(res);
          res.on('close', () => open.delete(res));
          if (req.url !== '/stream') return; // held: no answer
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          const chunk = Buffer.alloc(64 * 1024, 1);
          const pump = (): void => {
            while (res.write(chunk));
            res.once('drain', pump);
          };
          pump();
        });
        const s = f.session();
        const tls = await openTunnel(s, f.broker.port, HOST);
        tls.write(get('/hold') + get(second));
        t.ok(await until(() => f.upstream.received.length === 2), 'both reached the vendor');
        tls.destroy();
        t.ok(await until(() => f.events.length === 2), `both audited at once (${f.events.length})`);
        t.ok(
          f.events.every(
            (e) => e.type === 'egress.allowed' && e.abortedBy === 'child' && e.code === undefined,
          ),
          JSON.stringify(f.events.map((e) => [e.path, e.abortedBy, e.code])),
        );
        t.ok(await until(() => open.size === 0), `no upstream request left open (${open.size})`);
      });
    }
  },
);

t.test(
  'bad chunk framing after the vendor already answered: the vendor’s status kept, recorded as the child’s doing, not a refusal',
  async (t) => {
    // The recording upstream answers only after the body: this one answers before it.
    const f = await brokerFixture(t);
    const { createServer } = await import('node:https');
    const early = createServer(
      { key: f.upstream.pki.leaf(HOST).key, cert: f.upstream.pki.leaf(HOST).cert },
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('early');
      },
    );
    const { broker, events } = await brokerToVendor(t, early, f.upstream.pki.caPem);
    const s2 = broker.openSession({ egress: [HOST], tier: 'write' });
    const tls = await openTunnel(s2, broker.port, HOST);
    tls.on('error', () => {});
    let got = '';
    tls.on('data', (c: Buffer) => (got += c.toString('latin1')));
    tls.write(
      `PUT /x HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n`,
    );
    t.ok(await until(() => got.includes('early')), 'the vendor answered early');
    tls.write('zz\r\n');
    t.ok(await until(() => events.length === 1));
    t.match(events[0], {
      type: 'egress.allowed',
      status: 200,
      outcome: 'sent',
      abortedBy: 'child',
      code: 'CLI_BAD_REQUEST',
    });
    t.notOk('refusalStatus' in events[0]!);
    tls.destroy();
  },
);

t.test(
  'the vendor answers before the body ends: the rest of it is dropped, and the tunnel carries the next request',
  async (t) => {
    const f = await brokerFixture(t);
    const { createServer } = await import('node:https');
    const seen: string[] = [];
    let bodyBytes = 0;
    const early = createServer(
      { key: f.upstream.pki.leaf(HOST).key, cert: f.upstream.pki.leaf(HOST).cert },
      (req, res) => {
        seen.push(`${req.method} ${req.url}`);
        req.on('data', (c: Buffer) => (bodyBytes += c.length));
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '5' });
        res.end('early');
      },
    );
    const { broker, events } = await brokerToVendor(t, early, f.upstream.pki.caPem);
    const s = broker.openSession({ egress: [HOST], tier: 'write' });
    const tls = await openTunnel(s, broker.port, HOST);
    tls.on('error', () => {});
    let got = '';
    tls.on('data', (c: Buffer) => (got += c.toString('latin1')));
    const size = 1024 * 1024;
    tls.write(
      `PUT /up HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${size}\r\n\r\n`,
    );
    tls.write(Buffer.alloc(16 * 1024, 97));
    t.ok(await until(() => got.includes('early')), 'the vendor answered early');
    // the rest of the body after the answer, then the next request on the same tunnel
    tls.write(Buffer.alloc(size - 16 * 1024, 98));
    tls.write(`GET /next HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`);
    t.ok(await until(() => got.split('early').length === 3), 'the next request was answered');
    t.same(seen, ['PUT /up', 'GET /next']);
    t.ok(
      bodyBytes < size - 16 * 1024,
      `the rest of the body went nowhere (${bodyBytes} bytes reached the vendor)`,
    );
    t.ok(await until(() => events.length === 2));
    t.match(events[0], { type: 'egress.allowed', status: 200, outcome: 'sent' });
    t.match(events[1], { type: 'egress.allowed', status: 200, path: '/next' });
    tls.destroy();
  },
);
