/**
 * The broker's upstream client against scripted TLS vendors that write raw bytes: reuse only
 * when a response ended exactly where its framing said, every ambiguous or broken response
 * refused and its connection closed, bodies streamed both ways, timeouts, the line for a full
 * pool, and aborts in every state. The desync cases matter most: a connection is shared by
 * sessions, so bytes one response left behind must never become the next request's answer.
 */
import type { AddressInfo } from 'node:net';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import t, { type Test } from 'tap';
import { isBrokerError } from '../../src/errors.js';
import {
  type BodySink,
  type BodySource,
  UPSTREAM_ERRORS,
  type UpstreamPool as Pool,
  type UpstreamRequest,
  UpstreamPool,
} from '../../src/broker/pool.js';
import { testPki } from '../helpers/pki.js';

const HOST = 'api.vendor.test';
const pki = testPki();

interface SeenRequest {
  conn: number;
  head: string;
  body: Buffer;
}

/** What the vendor writes back for a request (raw bytes), or undefined to stay silent. */
type Script = (req: SeenRequest, socket: TLSSocket) => string | Buffer | undefined;

interface Vendor {
  port: number;
  connections: number;
  closed: number;
  seen: SeenRequest[];
  script: Script;
  close(): Promise<void>;
}

/** A TLS vendor that parses requests naively (Content-Length or chunked) and answers by script. */
async function vendor(t: Test, script: Script, host = HOST): Promise<Vendor> {
  const leaf = pki.leaf(host);
  const v: Vendor = { port: 0, connections: 0, closed: 0, seen: [], script, close: async () => {} };
  const server: Server = createServer({ key: leaf.key, cert: leaf.cert }, (socket) => {
    const conn = ++v.connections;
    socket.on('close', () => v.closed++);
    socket.on('error', () => {});
    let buf = Buffer.alloc(0);
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end === -1) return;
        const head = buf.subarray(0, end).toString('latin1');
        const rest = buf.subarray(end + 4);
        let body: Buffer;
        let used: number;
        const cl = /\r\ncontent-length: *(\d+)/i.exec(head);
        if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
          const parts: Buffer[] = [];
          let p = 0;
          let complete = false;
          for (;;) {
            const lf = rest.indexOf('\r\n', p);
            if (lf === -1) break;
            const size = Number.parseInt(rest.subarray(p, lf).toString('latin1'), 16);
            if (size === 0) {
              if (rest.length >= lf + 4) {
                used = lf + 4;
                complete = true;
              }
              break;
            }
            if (rest.length < lf + 2 + size + 2) break;
            parts.push(rest.subarray(lf + 2, lf + 2 + size));
            p = lf + 2 + size + 2;
          }
          if (!complete) return;
          body = Buffer.concat(parts);
        } else if (cl) {
          const n = Number(cl[1]);
          if (rest.length < n) return;
          body = rest.subarray(0, n);
          used = n;
        } else {
          body = Buffer.alloc(0);
          used = 0;
        }
        buf = rest.subarray(used!);
        const req = { conn, head, body: Buffer.from(body) };
        v.seen.push(req);
        const out = v.script(req, socket);
        if (out !== undefined) socket.write(out);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  v.port = (server.address() as AddressInfo).port;
  v.close = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      for (const s of open) s.destroy();
    });
  const open = new Set<TLSSocket>();
  server.on('secureConnection', (s: TLSSocket) => {
    open.add(s);
    s.on('close', () => open.delete(s));
  });
  t.teardown(() => v.close());
  return v;
}

function pool(t: Test, v: Vendor, opts: { connections?: number } = {}): Pool {
  const p = new UpstreamPool({
    ca: pki.caPem,
    resolve: () => ({ host: '127.0.0.1', port: v.port }),
    allowAddresses: ['127.0.0.0/8'],
    ...opts,
  });
  t.teardown(() => p.destroy());
  return p;
}

/** A pool whose connections go to `server`, a vendor scripted in the test itself, listened on here. */
async function poolTo(t: Test, server: Server): Promise<Pool> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const p = new UpstreamPool({
    ca: pki.caPem,
    resolve: () => ({ host: '127.0.0.1', port: (server.address() as AddressInfo).port }),
    allowAddresses: ['127.0.0.0/8'],
  });
  t.teardown(() => p.destroy());
  return p;
}

interface Outcome {
  started: boolean;
  status?: number;
  reason?: string;
  headers?: readonly string[];
  body: Buffer;
  ended: boolean;
  error?: Error & { code?: string };
}

/** Sends one request and waits for its end or error. */
function send(
  p: Pool,
  req: Partial<UpstreamRequest> = {},
  during?: (o: Outcome, c: ReturnType<Pool['request']>) => void,
): Promise<Outcome> {
  return new Promise((resolve) => {
    const o: Outcome = { started: false, body: Buffer.alloc(0), ended: false };
    const chunks: Buffer[] = [];
    const c = p.request(
      { host: HOST, method: 'GET', path: '/', headers: [], body: null, timeoutMs: 5000, ...req },
      {
        onStart: () => {
          o.started = true;
        },
        onHead: (status, reason, headers) => {
          o.status = status;
          o.reason = reason;
          o.headers = headers;
          during?.(o, c);
        },
        onData: (chunk) => chunks.push(Buffer.from(chunk)),
        onEnd: () => {
          o.ended = true;
          o.body = Buffer.concat(chunks);
          resolve(o);
        },
        onError: (err) => {
          o.error = err;
          o.body = Buffer.concat(chunks);
          resolve(o);
        },
      },
    );
  });
}

const ok = (body: string, extra = ''): string =>
  `HTTP/1.1 200 OK\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

t.test('a kept-alive connection carries the next request', async (t) => {
  const v = await vendor(t, (r) => ok(`hello ${r.head.split(' ')[1]}`));
  const p = pool(t, v);
  const a = await send(p, { path: '/a' });
  const b = await send(p, { path: '/b' });
  t.match(a, { status: 200, reason: 'OK', ended: true, started: true });
  t.equal(a.body.toString(), 'hello /a');
  t.equal(b.body.toString(), 'hello /b');
  t.equal(v.connections, 1);
  t.match(v.seen[0]!.head, /^GET \/a HTTP\/1\.1\r\nhost: api\.vendor\.test$/);
});

t.test('the request head: Host first, fields in order, framing the body needs', async (t) => {
  const v = await vendor(t, () => ok('x'));
  const p = pool(t, v);
  await send(p, {
    method: 'POST',
    path: '/p?q=1',
    headers: ['X-One', '1', 'x-two', 'a b'],
    body: Buffer.from('abc'),
  });
  t.equal(
    v.seen[0]!.head,
    'POST /p?q=1 HTTP/1.1\r\nhost: api.vendor.test\r\nX-One: 1\r\nx-two: a b\r\ncontent-length: 3',
  );
  t.equal(v.seen[0]!.body.toString(), 'abc');
  await send(p, { method: 'POST', path: '/empty' });
  t.match(v.seen[1]!.head, /\r\ncontent-length: 0$/, 'a POST without a body says so');
  await send(p, { method: 'DELETE', path: '/d' });
  t.notMatch(v.seen[2]!.head, /content-length/i, 'a DELETE without a body has no framing field');
});

t.test('a field that could end its line early is never sent', async (t) => {
  const v = await vendor(t, () => ok('x'));
  const p = pool(t, v);
  for (const headers of [
    ['authorization', 'Bearer x\r\nx-evil: 1'],
    ['authorization', 'Bearer x\nx-evil: 1'],
    ['x-a', 'nul\0'],
    ['bad name', 'v'],
    ['x-b:', 'v'],
  ]) {
    const o = await send(p, { headers });
    t.equal(o.error?.code, UPSTREAM_ERRORS.badRequestHeader, JSON.stringify(headers));
    t.equal(o.started, false, 'nothing was started');
    t.notMatch(o.error!.message, /Bearer|evil/, 'the value is not echoed');
  }
  const long = await send(p, { headers: [`x-${'n'.repeat(4000)}`, 'v\r\n'] });
  t.equal(long.error?.code, UPSTREAM_ERRORS.badRequestHeader);
  t.ok(long.error!.message.length < 200, `a long name is cut in the message (${long.error!.message.length})`);
  t.equal(v.seen.length, 0, 'the vendor received nothing');
  const after = await send(p);
  t.equal(after.status, 200, 'the connection is still good for the next request');
});

t.test('Connection: close, HTTP/1.0 and close-delimited bodies are never reused', async (t) => {
  const answers = [
    'HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nc1',
    'HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nc2',
    'HTTP/1.1 200 OK\r\n\r\nread to the end',
  ];
  const v = await vendor(t, (_r, s) => {
    const out = answers[v.seen.length - 1]!;
    if (v.seen.length === 3) {
      s.end(out);
      return undefined;
    }
    return out;
  });
  const p = pool(t, v);
  t.equal((await send(p)).body.toString(), 'c1');
  t.equal((await send(p)).body.toString(), 'c2');
  const c = await send(p);
  t.match(c, { ended: true, status: 200 });
  t.equal(c.body.toString(), 'read to the end');
  t.equal(v.connections, 3);
  t.same(new Set(v.seen.map((s) => s.conn)).size, 3);
});

t.test('bytes after a response never answer the next request', async (t) => {
  const smuggled = ok('SMUGGLED');
  const v = await vendor(t, (r) => {
    if (r.head.startsWith('GET /first')) return ok('first') + smuggled;
    return ok(`real ${r.conn}`);
  });
  const p = pool(t, v);
  const first = await send(p, { path: '/first' });
  t.equal(first.body.toString(), 'first', 'the first response is whole');
  const next = await send(p, { path: '/next' });
  t.equal(next.body.toString(), 'real 2', 'the next request got its own answer on a new connection');
  t.equal(v.connections, 2);
});

t.test('bytes arriving on an idle connection close it', async (t) => {
  const v = await vendor(t, (r, s) => {
    if (r.conn === 1) setTimeout(() => s.write('HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nlate'), 20);
    return ok(`conn ${r.conn}`);
  });
  const p = pool(t, v);
  t.equal((await send(p)).body.toString(), 'conn 1');
  await new Promise((r) => setTimeout(r, 150));
  t.equal((await send(p)).body.toString(), 'conn 2');
});

t.test('ambiguous or broken response framing fails the request and closes its connection', async (t) => {
  const bad: [string, string][] = [
    [
      'HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
      'both lengths',
    ],
    ['HTTP/1.1 200 OK\r\ncontent-length: 3\r\ncontent-length: 4\r\n\r\nabcd', 'two lengths'],
    ['HTTP/1.1 200 OK\r\ncontent-length: 3\r\ncontent-length: 3\r\n\r\nabc', 'the same length twice'],
    ['HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n0\r\n\r\n', 'a coding before chunked'],
    ['HTTP/1.1 200 OK\nx: y\r\ncontent-length: 0\r\n\r\n', 'a bare LF'],
    ['HTTP/1.1 200 OK\r\nx : y\r\ncontent-length: 0\r\n\r\n', 'space before the colon'],
    ['HTTP/1.1 200 OK\r\nx: y\r\n folded\r\ncontent-length: 0\r\n\r\n', 'a folded line'],
    ['HTTP/1.1 2000 OK\r\ncontent-length: 0\r\n\r\n', 'a four-digit status'],
    ['HTTP/2 200\r\ncontent-length: 0\r\n\r\n', 'another version'],
    ['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n0\r\n\r\n', 'a chunk extension'],
    [
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n',
      'a chunk longer than its size',
    ],
    ['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\nx-trailer: 1\r\n\r\n', 'a trailer'],
    ['HTTP/1.1 200 OK\r\ncontent-length: +3\r\n\r\nabc', 'a signed length'],
  ];
  let i = 0;
  const v = await vendor(t, (r) => (r.head.startsWith('GET /bad') ? bad[i]![0] : ok('fine')));
  const p = pool(t, v);
  for (; i < bad.length; i++) {
    const o = await send(p, { path: '/bad' });
    const before = v.connections;
    t.equal(o.error?.code, UPSTREAM_ERRORS.badResponse, bad[i]![1]);
    t.equal(o.ended, false);
    const next = await send(p, { path: '/next' });
    t.equal(next.body.toString(), 'fine', `${bad[i]![1]}: the next request is answered`);
    t.equal(v.connections, before + 1, `${bad[i]![1]}: on a new connection`);
  }
});

t.test('interim 1xx heads are skipped; 101 is refused', async (t) => {
  const v = await vendor(t, (r) =>
    r.head.startsWith('GET /switch')
      ? 'HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n'
      : `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n${ok('final')}`,
  );
  const p = pool(t, v);
  const o = await send(p);
  t.match(o, { status: 200, ended: true });
  t.equal(o.body.toString(), 'final');
  const s = await send(p, { path: '/switch' });
  t.equal(s.error?.code, UPSTREAM_ERRORS.protocol);
});

t.test('responses without a body: HEAD, 204, 304 end at their head and keep the connection', async (t) => {
  const v = await vendor(t, (r) => {
    if (r.head.startsWith('HEAD')) return 'HTTP/1.1 200 OK\r\ncontent-length: 1234\r\n\r\n';
    if (r.head.includes('/204')) return 'HTTP/1.1 204 No Content\r\n\r\n';
    if (r.head.includes('/304')) return 'HTTP/1.1 304 Not Modified\r\ncontent-length: 99\r\n\r\n';
    return ok('after');
  });
  const p = pool(t, v);
  t.match(await send(p, { method: 'HEAD' }), { status: 200, ended: true, body: Buffer.alloc(0) });
  t.match(await send(p, { path: '/204' }), { status: 204, ended: true });
  t.match(await send(p, { path: '/304' }), { status: 304, ended: true });
  t.equal((await send(p)).body.toString(), 'after');
  t.equal(v.connections, 1);
});

t.test('a chunked response is decoded and the connection kept', async (t) => {
  const v = await vendor(
    t,
    () => 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n',
  );
  const p = pool(t, v);
  const a = await send(p);
  t.equal(a.body.toString(), 'hello world');
  t.equal((await send(p)).body.toString(), 'hello world');
  t.equal(v.connections, 1);
});

t.test('a response cut short is an upstream failure after its head', async (t) => {
  const v = await vendor(t, (_r, s) => {
    s.end('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nfive!');
    return undefined;
  });
  const p = pool(t, v);
  const o = await send(p);
  t.equal(o.status, 200);
  t.equal(o.error?.code, UPSTREAM_ERRORS.closed);
  t.equal(o.body.toString(), 'five!');
});

t.test('a streamed body goes up chunked, or with its declared length', async (t) => {
  const v = await vendor(t, (r) => ok(String(r.body.length)));
  const p = pool(t, v);
  async function* parts(n: number, size: number): AsyncGenerator<Buffer> {
    for (let i = 0; i < n; i++) yield Buffer.alloc(size, 97 + (i % 26));
  }
  const a = await send(p, { method: 'PUT', body: parts(40, 64 * 1024) });
  t.equal(a.body.toString(), String(40 * 64 * 1024));
  t.match(v.seen[0]!.head, /transfer-encoding: chunked/);
  t.equal(v.seen[0]!.body[64 * 1024], 98, 'the bytes arrive in order');
  const b = await send(p, { method: 'PUT', headers: ['content-length', '300'], body: parts(3, 100) });
  t.equal(b.body.toString(), '300');
  t.notMatch(v.seen[1]!.head, /transfer-encoding/);
  const short = await send(p, { method: 'PUT', headers: ['content-length', '300'], body: parts(2, 100) });
  t.equal(short.error?.code, UPSTREAM_ERRORS.bodyLength);
  const long = await send(p, { method: 'PUT', headers: ['content-length', '300'], body: parts(4, 100) });
  t.equal(long.error?.code, UPSTREAM_ERRORS.bodyLength);
  const whole = await send(p, { method: 'PUT', headers: ['content-length', '5'], body: Buffer.from('abc') });
  t.equal(whole.error?.code, UPSTREAM_ERRORS.bodyLength, 'a whole body that disagrees with its length');
  t.equal(whole.started, false);
});

t.test(
  'an upload is read no faster than the vendor takes it: the source waits while the socket is full',
  async (t) => {
    // The vendor reads nothing for a while, then everything. A source that would give 64 MiB at
    // once is asked for no more than the sockets between hold.
    const leaf = pki.leaf(HOST);
    const total = 64 * 1024 * 1024;
    let received = 0;
    let reading: () => void = () => {};
    const server = createServer({ key: leaf.key, cert: leaf.cert }, (s) => {
      s.on('error', () => {});
      s.pause();
      reading = () => s.resume();
      let head = true;
      s.on('data', (d: Buffer) => {
        let body = d;
        if (head) {
          const end = d.indexOf('\r\n\r\n');
          body = d.subarray(end + 4);
          head = false;
        }
        received += body.length;
        if (received === total) s.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
      });
    });
    const p = await poolTo(t, server);
    const chunk = Buffer.alloc(64 * 1024, 120);
    let given = 0;
    let paused = false;
    let pauses = 0;
    let sink: BodySink | undefined;
    const flow = (): void => {
      while (!paused && given < total) {
        given += chunk.length;
        sink!.data(chunk);
      }
      if (given === total) sink!.end();
    };
    const source: BodySource = {
      start(s) {
        sink = s;
        setImmediate(flow);
      },
      pause() {
        paused = true;
        pauses++;
      },
      resume() {
        paused = false;
        setImmediate(flow);
      },
      stop() {},
    };
    const done = send(p, {
      method: 'PUT',
      headers: ['content-length', String(total)],
      body: source,
      timeoutMs: 30_000,
    });
    await new Promise((r) => setTimeout(r, 300));
    t.ok(paused, 'the source was paused');
    t.ok(given < 16 * 1024 * 1024, `no more was asked for than the sockets hold (${given} bytes)`);
    reading();
    const o = await done;
    t.match(o, { status: 200, ended: true });
    t.equal(received, total, 'the whole body arrived');
    t.ok(pauses > 1, `paused and resumed as the vendor read (${pauses} pauses)`);
  },
);

t.test('a body source that fails fails the exchange, with its own error', async (t) => {
  const v = await vendor(t, () => undefined);
  const p = pool(t, v);
  const boom = Object.assign(new Error('over the cap'), { code: 'TEST_CAP' });
  async function* failing(): AsyncGenerator<Buffer> {
    yield Buffer.from('part');
    throw boom;
  }
  const o = await send(p, { method: 'POST', body: failing() });
  t.equal(o.error, boom);
});

t.test('an answer before the upload ends ends the exchange and closes the connection', async (t) => {
  // The vendor answers 413 as soon as the head arrives, while the body is still coming.
  const leaf = pki.leaf(HOST);
  let conns = 0;
  const server = createServer({ key: leaf.key, cert: leaf.cert }, (s) => {
    conns++;
    s.on('error', () => {});
    s.once('data', () => s.write('HTTP/1.1 413 Payload Too Large\r\ncontent-length: 3\r\n\r\nbig'));
  });
  const p = await poolTo(t, server);
  let release: () => void = () => {};
  let stopped = false;
  async function* slow(): AsyncGenerator<Buffer> {
    try {
      yield Buffer.from('x'.repeat(10));
      await new Promise<void>((r) => {
        release = r;
      });
      yield Buffer.from('never');
    } finally {
      stopped = true;
    }
  }
  const o = await send(p, { method: 'POST', path: '/up', body: slow() });
  t.match(o, { status: 413, ended: true });
  t.equal(o.body.toString(), 'big');
  release();
  await new Promise((r) => setTimeout(r, 50));
  t.ok(stopped, 'the body source was let go');
  t.same(
    p.connections()[HOST],
    { idle: 0, busy: 0, connecting: 0, queued: 0 },
    'the connection was not kept',
  );
  t.equal(conns, 1);
});

t.test('a vendor that never answers times out; a slow body times out as a body', async (t) => {
  const v = await vendor(t, (r, s) => {
    if (r.head.includes('/slow-body')) s.write('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc');
    return undefined;
  });
  const p = pool(t, v);
  const a = await send(p, { timeoutMs: 150 });
  t.equal(a.error?.code, UPSTREAM_ERRORS.headersTimeout);
  t.equal(a.started, true);
  const b = await send(p, { path: '/slow-body', timeoutMs: 150 });
  t.equal(b.status, 200);
  t.equal(b.error?.code, UPSTREAM_ERRORS.bodyTimeout);
});

t.test('a full pool queues requests, in order, on the connections it has', async (t) => {
  const v = await vendor(t, (r) => ok(r.head.split(' ')[1]!));
  const p = pool(t, v, { connections: 2 });
  const all = await Promise.all(Array.from({ length: 10 }, (_, i) => send(p, { path: `/${i}` })));
  t.same(
    all.map((o) => o.body.toString()),
    Array.from({ length: 10 }, (_, i) => `/${i}`),
  );
  t.ok(v.connections <= 2, `at most two connections (${v.connections})`);
});

t.test('abort: in the line, waiting for a connect, and mid-response', async (t) => {
  const v = await vendor(t, (r, s) => {
    if (r.head.includes('/hang')) {
      s.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npart');
      return undefined;
    }
    return ok('done');
  });
  const p = pool(t, v, { connections: 1 });
  let calls = 0;
  const silent = {
    onStart: () => calls++,
    onHead: () => calls++,
    onData: () => calls++,
    onEnd: () => calls++,
    onError: () => calls++,
  };
  // waiting for its connect: the connection, once up, serves nothing and waits idle
  p.request(
    { host: HOST, method: 'GET', path: '/a', headers: [], body: null, timeoutMs: 5000 },
    silent,
  ).abort();
  const hang = send(p, { path: '/hang' }, (_o, c) => setTimeout(() => c.abort(), 30));
  // in the line behind /hang
  const queued = p.request(
    { host: HOST, method: 'GET', path: '/q', headers: [], body: null, timeoutMs: 5000 },
    silent,
  );
  queued.abort();
  const closedBefore = v.closed;
  const after = send(p, { path: '/after' });
  const h = await Promise.race([hang, new Promise<'pending'>((r) => setTimeout(() => r('pending'), 300))]);
  t.equal(h, 'pending', 'an aborted exchange hears nothing more');
  const a = await after;
  t.equal(a.body.toString(), 'done', 'the next in line is served once the aborted one lets go');
  t.equal(calls, 0, 'aborted exchanges got no handler calls');
  t.ok(v.closed > closedBefore, 'the connection the abort cut was closed');
  t.notOk(
    v.seen.some((s) => s.head.includes('/q')),
    'a request aborted in the line was never sent',
  );
});

t.test('destroy fails what waits and closes every connection', async (t) => {
  const v = await vendor(t, () => undefined);
  const p = pool(t, v, { connections: 1 });
  const a = send(p);
  const b = send(p);
  await new Promise((r) => setTimeout(r, 100));
  await p.destroy();
  t.equal((await a).error?.code, UPSTREAM_ERRORS.destroyed);
  t.equal((await b).error?.code, UPSTREAM_ERRORS.destroyed);
  t.equal((await send(p)).error?.code, UPSTREAM_ERRORS.destroyed);
});

t.test('the vendor certificate is checked against the real host', async (t) => {
  const v = await vendor(t, () => ok('x'), 'other.vendor.test');
  const p = pool(t, v);
  const o = await send(p);
  t.equal(o.error?.code, 'ERR_TLS_CERT_ALTNAME_INVALID');
  t.equal(o.started, false);
});

t.test('a special-purpose address is refused before any connection', async (t) => {
  const v = await vendor(t, () => ok('x'));
  const p = new UpstreamPool({ ca: pki.caPem, resolve: () => ({ host: '127.0.0.1', port: v.port }) });
  t.teardown(() => p.destroy());
  const o = await send(p);
  t.ok(isBrokerError(o.error), 'a BrokerError');
  t.match(o.error, { code: 'POLICY_BLOCKED', policyCode: 'CLI_EGRESS_ADDRESS_DENIED' });
  t.equal(v.connections, 0);
});

t.test('pause holds the response back until resume', async (t) => {
  const big = 'y'.repeat(4 * 1024 * 1024);
  const v = await vendor(t, () => ok(big));
  const p = pool(t, v);
  let got = 0;
  let atPause = 0;
  await new Promise<void>((resolve, reject) => {
    const c = p.request(
      { host: HOST, method: 'GET', path: '/', headers: [], body: null, timeoutMs: 5000 },
      {
        onStart: () => {},
        onHead: () => {},
        onData: (chunk) => {
          got += chunk.length;
          if (atPause === 0 && got > 0) {
            atPause = got;
            c.pause();
            setTimeout(() => {
              t.ok(got - atPause < 2 * 1024 * 1024, 'little arrives while paused');
              c.resume();
            }, 100);
          }
        },
        onEnd: () => resolve(),
        onError: reject,
      },
    );
  });
  t.equal(got, big.length);
});

t.test(
  'a kept-alive connection closed under a request: a safe bodiless request goes again, once',
  async (t) => {
    // The vendor closes its first connection on the second request, without a byte of answer.
    const v = await vendor(t, (r, s) => {
      if (r.conn === 1 && v.seen.filter((x) => x.conn === 1).length === 2) {
        s.destroy();
        return undefined;
      }
      return ok(`conn ${r.conn}`);
    });
    const p = pool(t, v);
    t.equal((await send(p)).body.toString(), 'conn 1');
    const again = await send(p, { path: '/again' });
    t.equal(again.body.toString(), 'conn 2', 'the GET was sent again on a new connection');
    t.equal(v.seen.filter((x) => x.head.includes('/again')).length, 2);

    // A POST is never sent twice.
    const w = await vendor(t, (r, s) => {
      if (r.conn === 1 && w.seen.filter((x) => x.conn === 1).length === 2) {
        s.destroy();
        return undefined;
      }
      return ok('fine');
    });
    const q = pool(t, w);
    await send(q);
    const post = await send(q, { method: 'POST', path: '/write', body: Buffer.from('{}') });
    t.equal(post.error?.code, UPSTREAM_ERRORS.closed);
    t.equal(w.seen.filter((x) => x.head.includes('/write')).length, 1);

    // On a fresh connection there is no stale close to explain: no second try.
    const z = await vendor(t, (_r, s) => {
      s.destroy();
      return undefined;
    });
    const fresh = await send(pool(t, z));
    t.equal(fresh.error?.code, UPSTREAM_ERRORS.closed);
    t.equal(z.seen.length, 1);
  },
);

t.test('a vendor that keeps closing gets a GET at most twice', async (t) => {
  const v = await vendor(t, (_r, s) => {
    if (v.seen.length === 1) return ok('first');
    s.destroy();
    return undefined;
  });
  const p = pool(t, v);
  await send(p);
  const o = await send(p, { path: '/x' });
  t.equal(o.error?.code, UPSTREAM_ERRORS.closed);
  t.equal(v.seen.filter((x) => x.head.includes('/x')).length, 2);
});

t.test('destroy ends a connect under way: its request fails and no connection is left', async (t) => {
  // A vendor that accepts TCP but never finishes the handshake: the connect hangs.
  const { createServer: netServer } = await import('node:net');
  const held: import('node:net').Socket[] = [];
  const server = netServer((s) => {
    held.push(s);
    s.resume();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of held) s.destroy();
    return new Promise<void>((r) => server.close(() => r()));
  });
  const p = new UpstreamPool({
    ca: pki.caPem,
    resolve: () => ({ host: '127.0.0.1', port: (server.address() as AddressInfo).port }),
    allowAddresses: ['127.0.0.0/8'],
  });
  const pending = send(p);
  await new Promise((r) => setTimeout(r, 100));
  t.equal(held.length, 1, 'the connect reached the vendor');
  await p.destroy();
  const o = await pending;
  t.equal(o.error?.code, UPSTREAM_ERRORS.destroyed);
  t.equal(o.started, false);
  t.same(p.connections(), {}, 'no connection left');
  for (let i = 0; i < 100 && !held[0]!.closed; i++) await new Promise((r) => setTimeout(r, 20));
  t.ok(held[0]!.closed, 'the half-open socket was closed');
});

// timeout=2 s less the 1 s margin: closed about 1 s after the response. Without the hint the
// connection would idle for the 30 s default: the close coming within the test's limit is the hint at work.
t.test(
  "an idle connection closes at the vendor's keep-alive hint, less a margin",
  { timeout: 20_000 },
  async (t) => {
    const v = await vendor(t, () => ok('x', 'keep-alive: timeout=2\r\n'));
    const p = pool(t, v);
    await send(p);
    t.same(
      p.connections()[HOST],
      { idle: 1, busy: 0, connecting: 0, queued: 0 },
      'kept alive after the response',
    );
    await send(p);
    t.equal(v.connections, 1, 'not closed at once: the next request reuses it');
    // polled until it closes; bounded only so a failed test does not poll on past its limit
    for (let i = 0; v.closed === 0 && i < 1500; i++) await new Promise((r) => setTimeout(r, 20));
    t.equal(v.closed, 1, 'the pool closed the idle connection');
    t.same(p.connections()[HOST], { idle: 0, busy: 0, connecting: 0, queued: 0 });
  },
);
