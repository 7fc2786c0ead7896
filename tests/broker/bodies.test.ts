import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { brokerFixture, brokerToVendor, openTunnel, until } from '../helpers/broker.js';
import { curl } from '../helpers/curl.js';

const MiB = 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), 'clibroker-bodies-'));
function file(name: string, size: number): { path: string; sha: string } {
  const b = randomBytes(size);
  const path = join(dir, name);
  writeFileSync(path, b);
  return { path, sha: createHash('sha256').update(b).digest('hex') };
}
const exact = file('exact.bin', 8 * MiB);
const over = file('over.bin', 8 * MiB + 1);

t.test('an 8 MiB content-length upload passes intact (the cap is inclusive)', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session({ tier: 'write' });
  const r = await curl(s, ['-T', exact.path, 'https://api.example.com/upload/']);
  t.equal(r.code, 0, r.stderr);
  t.equal(f.upstream.received[0]!.method, 'PUT');
  t.equal(f.upstream.received[0]!.bodyBytes, 8 * MiB);
  t.equal(f.upstream.received[0]!.bodySha256, exact.sha);
  t.equal(f.events[0]!.requestBytes, 8 * MiB);
});

t.test('an 8 MiB chunked upload passes intact', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session({ tier: 'write' });
  // An explicit binary type: curl's default for --data-binary is a urlencoded form, which the
  // classifier reads whole to look for a _method override (the next test).
  const r = await curl(s, [
    '-H',
    'Transfer-Encoding: chunked',
    '-H',
    'Content-Type: application/octet-stream',
    '--data-binary',
    `@${exact.path}`,
    'https://api.example.com/chunked',
  ]);
  t.equal(r.code, 0, r.stderr);
  t.equal(f.upstream.received[0]!.bodyBytes, 8 * MiB);
  t.equal(f.upstream.received[0]!.bodySha256, exact.sha);
  t.notOk(f.upstream.received[0]!.headers['content-length'], 'streamed, not buffered into a content-length');
});

t.test(
  'an 8 MiB chunked urlencoded upload is read whole (bounded by the cap) and forwarded intact',
  async (t) => {
    const f = await brokerFixture(t);
    const s = f.session({ tier: 'write' });
    const r = await curl(s, [
      '-H',
      'Transfer-Encoding: chunked',
      '--data-binary',
      `@${exact.path}`,
      'https://api.example.com/chunked',
    ]);
    t.equal(r.code, 0, r.stderr);
    t.equal(f.upstream.received[0]!.bodyBytes, 8 * MiB);
    t.equal(f.upstream.received[0]!.bodySha256, exact.sha);
    t.equal(f.events[0]!.requestBytes, 8 * MiB);
  },
);

t.test('8 MiB + 1 with content-length: 413 before any byte goes upstream', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session({ tier: 'write' });
  const r = await curl(s, [
    '-i',
    '--http1.1',
    '-H',
    'Expect:',
    '-T',
    over.path,
    'https://api.example.com/upload/',
  ]);
  t.match(r.stdout, /^HTTP\/1\.1 413 Payload Too Large/);
  t.match(r.stdout, /CLI_UPLOAD_TOO_LARGE/);
  t.equal(f.upstream.received.length, 0, 'upstream received nothing');
  t.match(f.events[0], {
    type: 'egress.blocked',
    code: 'CLI_UPLOAD_TOO_LARGE',
    refusalStatus: 413,
    outcome: 'not_sent',
  });
  t.notOk('status' in f.events[0]!, 'a refusal has no vendor status');
});

t.test('8 MiB + 1 with Expect: 100-continue: refused without the child sending its body', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session({ tier: 'write' });
  const r = await curl(s, ['-v', '--http1.1', '-T', over.path, 'https://api.example.com/upload/']);
  t.match(r.stderr, /Expect: 100-continue/);
  t.notMatch(r.stderr, /HTTP\/1\.1 100 Continue/, 'no 100 Continue for a refused body');
  t.match(r.stderr, /HTTP\/1\.1 413/);
  t.equal(f.events[0]!.requestBytes, 0, 'no body byte was read');
  t.equal(f.upstream.received.length, 0);
});

t.test('8 MiB + 1 chunked: the upstream request is aborted and the child gets 413', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session({ tier: 'write' });
  const r = await curl(s, [
    '-i',
    '-H',
    'Transfer-Encoding: chunked',
    '--data-binary',
    `@${over.path}`,
    'https://api.example.com/chunked',
  ]);
  t.match(
    r.stdout,
    /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 413 Payload Too Large/,
    'curl waited for 100-continue, then got 413',
  );
  await new Promise((r) => setTimeout(r, 100));
  t.equal(f.upstream.received.length, 0, 'upstream never saw a complete request');
  t.match(f.events[0], { type: 'egress.blocked', code: 'CLI_UPLOAD_TOO_LARGE' });
});

t.test(
  '8 MiB + 1 chunked and streamed (not read whole): cut at the cap, the vendor never gets the whole body, the child gets 413',
  async (t) => {
    const f = await brokerFixture(t);
    const s = f.session({ tier: 'write' });
    const r = await curl(s, [
      '-i',
      '-H',
      'Transfer-Encoding: chunked',
      '-H',
      'Content-Type: application/octet-stream',
      '--data-binary',
      `@${over.path}`,
      'https://api.example.com/chunked',
    ]);
    t.match(r.stdout, /HTTP\/1\.1 413 Payload Too Large/);
    await new Promise((r) => setTimeout(r, 100));
    t.equal(f.upstream.received.length, 0, 'upstream never saw a complete request');
    t.match(f.events[0], { type: 'egress.blocked', code: 'CLI_UPLOAD_TOO_LARGE' });
  },
);

t.test('a GraphQL body over the cap is refused while buffering for classification', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session({ tier: 'write' });
  const r = await curl(s, [
    '-i',
    '-H',
    'Transfer-Encoding: chunked',
    '-H',
    'content-type: application/json',
    '--data-binary',
    `@${over.path}`,
    'https://api.example.com/graphql',
  ]);
  t.match(r.stdout, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 413/);
  t.equal(f.upstream.received.length, 0);
});

t.test('a large response streams back intact', async (t) => {
  const f = await brokerFixture(t);
  const big = randomBytes(5 * MiB);
  f.upstream.route((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    for (let i = 0; i < big.length; i += 64 * 1024) res.write(big.subarray(i, i + 64 * 1024));
    res.end();
  });
  const s = f.session();
  const out = join(dir, 'download.bin');
  const r = await curl(s, ['-o', out, 'https://api.example.com/download']);
  t.equal(r.code, 0, r.stderr);
  const { readFileSync } = await import('node:fs');
  t.equal(
    createHash('sha256').update(readFileSync(out)).digest('hex'),
    createHash('sha256').update(big).digest('hex'),
  );
  t.equal(f.events[0]!.responseBytes, 5 * MiB);
});

t.test('a refused upload is drained up to a limit, then its connection is cut', async (t) => {
  const { exchange } = await import('../helpers/broker.js');
  const f = await brokerFixture(t);
  const s = f.session({ tier: 'write', limits: { maxBodyBytes: 1024 } });
  const small = await openTunnel(s, f.broker.port, 'api.example.com');
  const within = await exchange(
    small,
    `PUT /a HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 2000\r\n\r\n${'x'.repeat(2000)}GET /b HTTP/1.1\r\nHost: api.example.com\r\n\r\n`,
    (o) => o.includes('"/b"'),
  );
  t.match(
    within,
    /^HTTP\/1\.1 413[\s\S]*HTTP\/1\.1 200 OK/,
    'a slightly-over body is drained and the connection stays usable',
  );
  small.destroy();

  const flood = await openTunnel(s, f.broker.port, 'api.example.com');
  const out = await exchange(
    flood,
    `PUT /c HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 1000000\r\n\r\n${'x'.repeat(200_000)}`,
  );
  t.match(out, /^HTTP\/1\.1 413/, 'the refusal arrives first');
  t.ok(flood.destroyed || flood.readableEnded, 'then the connection is cut past 4× the cap');
  t.same(
    f.upstream.received.map((r) => r.url),
    ['/b'],
  );
});

t.test(
  'over the cap while a GraphQL body is buffered: 413, the rest read and dropped, the tunnel carries the next request',
  async (t) => {
    const f = await brokerFixture(t);
    const s = f.session({ tier: 'write' });
    const tls = await openTunnel(s, f.broker.port, 'api.example.com');
    tls.on('error', () => {});
    let got = '';
    tls.on('data', (c: Buffer) => (got += c.toString('latin1')));
    tls.write(
      'POST /graphql HTTP/1.1\r\nHost: api.example.com\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
    const chunk = `${(64 * 1024).toString(16)}\r\n${'a'.repeat(64 * 1024)}\r\n`;
    for (let i = 0; i < 130; i++) tls.write(chunk, 'latin1'); // 8 MiB + 128 KiB
    tls.write('0\r\n\r\nGET /next HTTP/1.1\r\nHost: api.example.com\r\n\r\n');
    t.ok(
      await until(() => /HTTP\/1\.1 413[\s\S]*HTTP\/1\.1 200/.test(got), 10_000),
      'the 413, then the next answer',
    );
    t.same(
      f.upstream.received.map((r) => r.url),
      ['/next'],
      'only the next request reached the vendor',
    );
    tls.destroy();
  },
);

t.test(
  'an upload to a vendor that stops reading: the relay waits, then goes on when it reads again; the body arrives whole and the tunnel carries the next request',
  async (t) => {
    const f = await brokerFixture(t);
    const { createServer } = await import('node:https');
    const size = 64 * MiB;
    let release: () => void = () => {};
    let bodyBytes = 0;
    const hash = createHash('sha256');
    const seen: string[] = [];
    const vendor = createServer(
      { key: f.upstream.pki.leaf('api.example.com').key, cert: f.upstream.pki.leaf('api.example.com').cert },
      (req, res) => {
        seen.push(`${req.method} ${req.url}`);
        if (req.method !== 'PUT') {
          res.writeHead(200, { 'content-length': '4' }).end('next');
          return;
        }
        // reads nothing until the test lets it
        req.pause();
        release = () => {
          req.on('data', (c: Buffer) => {
            bodyBytes += c.length;
            hash.update(c);
          });
          req.on('end', () => res.writeHead(200, { 'content-length': '4' }).end('done'));
          req.resume();
        };
      },
    );
    const { broker } = await brokerToVendor(t, vendor, f.upstream.pki.caPem);
    const s = broker.openSession({
      egress: ['api.example.com'],
      tier: 'write',
      limits: { maxBodyBytes: size },
    });
    const tls = await openTunnel(s, broker.port, 'api.example.com');
    tls.on('error', () => {});
    let got = '';
    tls.on('data', (c: Buffer) => (got += c.toString('latin1')));
    tls.write(
      `PUT /up HTTP/1.1\r\nHost: api.example.com\r\nContent-Type: application/octet-stream\r\nContent-Length: ${size}\r\n\r\n`,
    );
    const chunk = randomBytes(64 * 1024);
    const sent = createHash('sha256');
    for (let i = 0; i < size / chunk.length; i++) {
      tls.write(chunk);
      sent.update(chunk);
    }
    tls.write('GET /next HTTP/1.1\r\nHost: api.example.com\r\n\r\n');
    // The vendor holds the request unread for a while: the relay pauses on its full socket.
    t.ok(await until(() => seen.length === 1), 'the request reached the vendor');
    await new Promise((r) => setTimeout(r, 300));
    t.same(seen, ['PUT /up'], 'nothing after the upload was sent while it waited');
    release();
    t.ok(await until(() => got.includes('next'), 20_000), 'both answers came');
    t.match(got, /HTTP\/1\.1 200 OK[\s\S]*done[\s\S]*HTTP\/1\.1 200 OK[\s\S]*next$/);
    t.equal(bodyBytes, size, 'the whole body arrived');
    t.equal(hash.digest('hex'), sent.digest('hex'), 'intact');
    t.same(seen, ['PUT /up', 'GET /next']);
    tls.destroy();
  },
);
