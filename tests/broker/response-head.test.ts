/**
 * The strict response-head parser on its own: one head per refusal reason, the parsed head's
 * fields and flags, the limits at their edges, the same result however the bytes are split
 * (byte by byte, every split in two, and through `start`), reset between heads in one buffer,
 * and the body framing each head gets for each request method.
 */
import t, { type Test } from 'tap';
import { DEFAULT_MAX_HEADERS } from '../../src/broker/http1/head-parser.js';
import {
  DEFAULT_MAX_RESPONSE_HEAD_BYTES,
  type ResponseHead,
  type ResponseHeadParserOptions,
  type ResponseHeadResult,
  ResponseHeadParser,
  type ResponseRefusal,
  responseFraming,
} from '../../src/broker/http1/response-head.js';
import { feedPieces, reasonOf, refusalsEarned, splitsAgree } from '../helpers/heads.js';

const head = (lines: string, start = 'HTTP/1.1 200 OK'): string => `${start}\r\n${lines}\r\n`;

/** One head per reason (the Record makes the compiler check none is missing). */
const REFUSED: Record<ResponseRefusal, string | [string, ResponseHeadParserOptions]> = {
  'head-too-large': [head(`X-Big: ${'a'.repeat(200)}\r\n`), { maxHeadBytes: 100 }],
  'too-many-headers': [head('A: 1\r\nB: 2\r\nC: 3\r\n'), { maxHeaders: 2 }],
  'bare-lf': 'HTTP/1.1 200 OK\nA: b\r\n\r\n',
  'bare-cr': head('X-A: a\rb\r\n'),
  nul: head('X-A: a\0b\r\n'),
  'bad-status-line': head('', 'HTTP/1.1  200 OK'),
  'bad-version': head('', 'HTTP/1.2 200 OK'),
  'bad-status': head('', 'HTTP/1.1 600 Nope'),
  'bad-reason': head('', 'HTTP/1.1 200 O\x01K'),
  'bad-header-name': head('X-A : b\r\n'),
  'bad-header-value': head('X-A: a\x7fb\r\n'),
  'obs-fold': head('X-A: a\r\n b\r\n'),
  'duplicate-content-length': head('Content-Length: 5\r\nContent-Length: 5\r\n'),
  'bad-content-length': head('Content-Length: 05\r\n'),
  'duplicate-transfer-encoding': head('Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n'),
  'te-not-chunked': head('Transfer-Encoding: gzip, chunked\r\n'),
  'te-and-content-length': head('Transfer-Encoding: chunked\r\nContent-Length: 5\r\n'),
  'http10-te': head('Transfer-Encoding: chunked\r\n', 'HTTP/1.0 200 OK'),
  'bad-connection': head('Connection: keep-alive,,close\r\n'),
};

function parse(text: string | Buffer, opts?: ResponseHeadParserOptions): ResponseHeadResult {
  return new ResponseHeadParser(opts).push(typeof text === 'string' ? Buffer.from(text, 'latin1') : text);
}

function headOf(t: Test, text: string): ResponseHead {
  const r = parse(text);
  if (r.kind !== 'head') throw t.fail(`not a head (${reasonOf(r)}): ${JSON.stringify(text)}`);
  return r.head;
}

t.test('each refusal reason, from the head that earns it', async (t) => {
  refusalsEarned(t, REFUSED, parse);
});

t.test('more refusals: the spellings that must not pass', async (t) => {
  const cases: [string, ResponseRefusal][] = [
    [`\r\n${head('')}`, 'bad-status-line'],
    [`\n${head('')}`, 'bare-lf'],
    ['HTTP/1.1 200 OK\r\r\n\r\n', 'bare-cr'],
    ['HTTP/1.1 200 OK\r\n\n', 'bare-lf'],
    ['HTTP/1.1 200 OK\r\nA: b\n\r\n', 'bare-lf'],
    [head('', 'HTTP/1.1 200 O\0K'), 'nul'],
    [head('', 'HTTP/1.\0 200 OK'), 'nul'],
    [head('', 'HTTP/1.1 200 OK\r'), 'bare-cr'],
    [head('X-A\0: b\r\n'), 'nul'],
    [head('', ' HTTP/1.1 200 OK'), 'bad-status-line'],
    [head('', 'HTTP/1.1'), 'bad-status-line'],
    [head('', 'HTTP/1.1 '), 'bad-status-line'],
    [head('', 'HTTP/1.1 20'), 'bad-status-line'],
    [head('', 'HTTP/1.1 2000'), 'bad-status-line'],
    [head('', 'HTTP/1.1 2000 OK'), 'bad-status-line'],
    [head('', 'HTTP/1.1 200X'), 'bad-status-line'],
    [head('', 'HTTP/1.1 2x0 OK'), 'bad-status-line'],
    [head('', 'HTTP/1.1 +20 OK'), 'bad-status-line'],
    [head('', 'HTTP/1.1\t200 OK'), 'bad-status-line'],
    [head('', 'HTTP/1.1 200\tOK'), 'bad-status-line'],
    [head('', 'http/1.1 200 OK'), 'bad-status-line'],
    [head('', 'HTTP/1.10 200 OK'), 'bad-status-line'],
    [head('', 'HTTP/11 200 OK'), 'bad-status-line'],
    [head('', 'HTTPS/1.1 200 OK'), 'bad-status-line'],
    [head('', 'ICE/1.0 200 OK'), 'bad-status-line'],
    [head('', 'GET / HTTP/1.1'), 'bad-status-line'],
    [head('', 'HTTP/2.0 200 OK'), 'bad-version'],
    [head('', 'HTTP/0.9 200 OK'), 'bad-version'],
    [head('', 'HTTP/1.9 200 OK'), 'bad-version'],
    [head('', 'HTTP/1.1 000 OK'), 'bad-status'],
    [head('', 'HTTP/1.1 099 OK'), 'bad-status'],
    [head('', 'HTTP/1.1 999'), 'bad-status'],
    [head('', 'HTTP/1.1 104 Unassigned'), 'bad-status'],
    [head('Content-Length: 5\r\n', 'HTTP/1.1 150 x'), 'bad-status'],
    [head('', 'HTTP/1.1 199'), 'bad-status'],
    [head('', 'HTTP/1.1 200 O\x7fK'), 'bad-reason'],
    [head('', 'HTTP/1.1 200 O\x0bK'), 'bad-reason'],
    [head('', 'HTTP/1.1 200 \x1b[31m'), 'bad-reason'],
    [head(': b\r\n'), 'bad-header-name'],
    [head('X-A\t: b\r\n'), 'bad-header-name'],
    [head('X\xe9: b\r\n'), 'bad-header-name'],
    [head('no colon\r\n'), 'bad-header-name'],
    [head('\tX-A: b\r\n'), 'obs-fold'],
    [head('X-A: \x01\r\n'), 'bad-header-value'],
    ...['', ' ', '-1', '0x5', '5 5', '05', '00', '5,5', '1e3', '1234567890123456', '5.0'].map(
      (v): [string, ResponseRefusal] => [head(`Content-Length: ${v}\r\n`), 'bad-content-length'],
    ),
    ...['chunked, identity', 'identity', 'gzip', 'chunked;q=1', '', 'chunked,', '"chunked"', 'chunkedx'].map(
      (v): [string, ResponseRefusal] => [head(`Transfer-Encoding: ${v}\r\n`), 'te-not-chunked'],
    ),
    [head('Transfer-Encoding: chunked\r\ntransfer-encoding: chunked\r\n'), 'duplicate-transfer-encoding'],
    [head('content-length: 1\r\nCONTENT-LENGTH: 1\r\n'), 'duplicate-content-length'],
    [head('Content-Length: 0\r\nTransfer-Encoding: chunked\r\n'), 'te-and-content-length'],
    // a HTAB after a token that decides something (node's parser takes it as part of the token)
    [head('Content-Length: 5\t\r\n'), 'bad-content-length'],
    [head('Content-Length: 5 \t \r\n'), 'bad-content-length'],
    [head('Transfer-Encoding: chunked\t\r\n'), 'te-not-chunked'],
    [head('Transfer-Encoding: chunked \t\r\n'), 'te-not-chunked'],
    [head('Connection: keep-alive\t\r\n', 'HTTP/1.0 200 OK'), 'bad-connection'],
    [head('Connection: close\t, x\r\n'), 'bad-connection'],
    [head('Connection: x ,close \t\r\n'), 'bad-connection'],
    ...['', ',', 'close,', ',close', 'a b', 'x"y'].map((v): [string, ResponseRefusal] => [
      head(`Connection: ${v}\r\n`),
      'bad-connection',
    ]),
  ];
  for (const [text, reason] of cases) t.equal(reasonOf(parse(text)), reason, JSON.stringify(text));
});

t.test('a head: status, reason, trimmed values and flags', async (t) => {
  const text =
    'HTTP/1.1 201 Created  \t\xe9\r\nContent-Length: 12\r\nX-Pad: \t a  b \t\r\nX-Empty:\r\n' +
    'X-Obs: caf\xe9\r\nConnection: Keep-Alive\r\nKeep-Alive: timeout=5, max=100\r\n\r\nbody';
  const r = parse(text);
  if (r.kind !== 'head') throw t.fail(`not a head: ${reasonOf(r)}`);
  t.equal(r.bodyOffset, text.length - 4);
  t.same(r.head, {
    version: '1.1',
    status: 201,
    reason: 'Created  \t\xe9',
    headers: [
      'Content-Length',
      '12',
      'X-Pad',
      'a  b',
      'X-Empty',
      '',
      'X-Obs',
      'caf\xe9',
      'Connection',
      'Keep-Alive',
      'Keep-Alive',
      'timeout=5, max=100',
    ],
    contentLength: 12,
    chunked: false,
    connectionClose: false,
    keepAliveTimeoutMs: 5000,
    headBytes: text.length - 4,
  });
  t.same(headOf(t, head('', 'HTTP/1.1 204')).reason, '', 'no reason phrase at all');
  t.same(headOf(t, head('', 'HTTP/1.1 204 ')).reason, '', 'an empty one');
  t.same(headOf(t, head('', 'HTTP/1.1 200  OK')).reason, ' OK', 'the reason as sent, leading space included');
  for (const st of [100, 101, 102, 103, 200, 299, 300, 404, 500])
    t.same(headOf(t, head('', `HTTP/1.1 ${st} x`)).status, st, `status ${st}`);
  t.same(headOf(t, head('', 'HTTP/1.1 599 x')).status, 599);
  t.same(headOf(t, head('Transfer-Encoding:  ChUnKeD \r\n')).chunked, true, 'chunked in any case, trimmed');
  t.same(headOf(t, head('Content-Length: 0\r\n')).contentLength, 0);
  t.same(headOf(t, head('Content-Length: \t5  \r\n')).contentLength, 5, 'HTAB before, SP after');
  t.same(headOf(t, head('Transfer-Encoding: \t chunked \r\n')).chunked, true, 'HTAB before, SP after');
  t.same(headOf(t, head('Connection: x,\tclose , y\r\n')).connectionClose, true, 'HTAB before, SP after');
  t.same(headOf(t, head('Content-Length: 999999999999999\r\n')).contentLength, 999999999999999);
  t.same(headOf(t, head('')).contentLength, -1);
});

t.test('keep-alive: Connection tokens, HTTP/1.0, and the Keep-Alive hint', async (t) => {
  const close = (lines: string, start?: string) => headOf(t, head(lines, start)).connectionClose;
  t.equal(close(''), false, 'HTTP/1.1 is kept alive by default');
  t.equal(close('Connection: close\r\n'), true);
  t.equal(close('Connection: CLOSE\r\n'), true, 'one token, any case');
  t.equal(close('Connection: Upgrade, CLOSE\r\n'), true, 'close anywhere in the list, any case');
  t.equal(close('Connection: keep-alive, close\r\n'), true, 'close wins');
  t.equal(close('Connection: closed\r\n'), false, 'a token, not a prefix');
  t.equal(close('Proxy-Connection: close\r\n'), true, 'Proxy-Connection close is honoured too');
  t.equal(close('Proxy-Connection: x y,,\r\n'), false, 'and never refused');
  t.equal(close('', 'HTTP/1.0 200 OK'), true, 'HTTP/1.0 closes by default');
  t.equal(close('Connection: keep-alive\r\n', 'HTTP/1.0 200 OK'), false);
  t.equal(close('Connection: Keep-Alive\r\n', 'HTTP/1.0 200 OK'), false);
  t.equal(close('Connection: keep-alive, close\r\n', 'HTTP/1.0 200 OK'), true);
  t.equal(close('Proxy-Connection: keep-alive\r\n', 'HTTP/1.0 200 OK'), true, 'only Connection keeps alive');
  const hint = (value: string) => headOf(t, head(`Keep-Alive: ${value}\r\n`)).keepAliveTimeoutMs;
  t.equal(hint('timeout=5'), 5000);
  t.equal(hint('max=10, Timeout = 30'), 30_000);
  t.equal(hint('timeout=0'), 0);
  t.equal(hint('timeout=5, timeout=2'), 2000, 'the smallest');
  t.equal(headOf(t, head('Keep-Alive: timeout=9\r\nkeep-alive: timeout=3\r\n')).keepAliveTimeoutMs, 3000);
  for (const v of [
    '',
    'timeout',
    'timeout=',
    'timeout=-1',
    'timeout=1.5',
    'timeout=5s',
    'timeout=1234567890',
    ',,x"',
  ])
    t.equal(hint(v), undefined, `malformed, ignored: ${JSON.stringify(v)}`);
  t.equal(headOf(t, head('')).keepAliveTimeoutMs, undefined);
});

t.test('limits, at their edges', async (t) => {
  const text = head(`X-Pad: ${'p'.repeat(100)}\r\n`);
  const n = Buffer.byteLength(text);
  t.equal(reasonOf(parse(text, { maxHeadBytes: n })), 'head', 'exactly the limit');
  t.equal(reasonOf(parse(text, { maxHeadBytes: n - 1 })), 'head-too-large', 'one over');
  t.equal(reasonOf(parse(text + 'x'.repeat(100), { maxHeadBytes: n })), 'head', 'the body is not counted');
  const p = new ResponseHeadParser({ maxHeadBytes: 10 });
  t.equal(p.push(Buffer.from('HTTP/1.1 2')).kind, 'more');
  t.equal(reasonOf(p.push(Buffer.from('0'))), 'head-too-large', 'refused without waiting for a line end');
  t.equal(DEFAULT_MAX_RESPONSE_HEAD_BYTES, 16_384);
  const fits = head(`X-Big: ${'b'.repeat(DEFAULT_MAX_RESPONSE_HEAD_BYTES - 40)}\r\n`);
  t.equal(reasonOf(parse(fits)), 'head', '16 KiB by default');
  const big = head(`X-Big: ${'b'.repeat(DEFAULT_MAX_RESPONSE_HEAD_BYTES)}\r\n`);
  t.equal(reasonOf(parse(big)), 'head-too-large');
  const many = (k: number) => head('X: y\r\n'.repeat(k));
  t.equal(reasonOf(parse(many(DEFAULT_MAX_HEADERS))), 'head');
  t.equal(reasonOf(parse(many(DEFAULT_MAX_HEADERS + 1))), 'too-many-headers');
});

const SPLIT_HEADS: [string, ResponseHeadParserOptions?][] = [
  ['HTTP/1.1 200 OK\r\nContent-Length: 3\r\nX-V:  v \r\nConnection: close\r\n\r\nabc'],
  ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nKeep-Alive: timeout=4\r\n\r\n3\r\nabc\r\n0\r\n\r\n'],
  ['HTTP/1.0 404 Not Found\r\nConnection: keep-alive\r\n\r\n'],
  ['HTTP/1.1 204\r\n\r\n'],
  [head('X: y\r\n'.repeat(3)), { maxHeaders: 3 }],
  [head(`X-Pad: ${'p'.repeat(60)}\r\n`), { maxHeadBytes: 80 }],
  [head(`X-Pad: ${'p'.repeat(60)}\r\n`), { maxHeadBytes: 90 }],
  ...Object.values(REFUSED).map((c): [string, ResponseHeadParserOptions?] =>
    typeof c === 'string' ? [c] : c,
  ),
  ['HTTP/1.1 200 OK\r\nA: b\r\r\n'],
  ['HTTP/1.1 200 OK\r\nA: b\n'],
];

t.test('the same result however the head is split, CRLF included', async (t) => {
  for (const [text, opts] of SPLIT_HEADS) splitsAgree(t, () => new ResponseHeadParser(opts), text);
});

t.test('start: only the bytes from it are read, offsets stay in the buffer', async (t) => {
  const junk = 'JUNK\n\0\r';
  for (const [text, opts] of SPLIT_HEADS) {
    const whole = Buffer.from(text, 'latin1');
    const one = feedPieces(new ResponseHeadParser(opts), [whole]);
    const withJunk = Buffer.concat([Buffer.from(junk, 'latin1'), whole]);
    const r = new ResponseHeadParser(opts).push(withJunk, junk.length);
    const expected = one.kind === 'head' ? { ...one, bodyOffset: one.bodyOffset + junk.length } : one;
    t.same(r, expected, JSON.stringify(text.slice(0, 40)));
    // and split, the second piece pushed from an offset too
    let bad = 0;
    for (let i = 1; i < whole.length; i++) {
      const p = new ResponseHeadParser(opts);
      const a = p.push(Buffer.concat([Buffer.from(junk, 'latin1'), whole.subarray(0, i)]), junk.length);
      let got: ResponseHeadResult = a.kind === 'head' ? { ...a, bodyOffset: a.bodyOffset - junk.length } : a;
      if (a.kind === 'more') {
        const b = p.push(Buffer.concat([Buffer.from(junk, 'latin1'), whole.subarray(i)]), junk.length);
        got = b.kind === 'head' ? { ...b, bodyOffset: b.bodyOffset - junk.length + i } : b;
      }
      if (JSON.stringify(got) !== JSON.stringify(one)) bad++;
    }
    t.equal(bad, 0, `every split, from an offset: ${JSON.stringify(text.slice(0, 40))}`);
  }
});

t.test('reset: an interim 1xx then the final head in one buffer; pipelined responses', async (t) => {
  const buf = Buffer.from(
    'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n' +
      'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n',
  );
  const p = new ResponseHeadParser();
  const seen: [number, string][] = [];
  let at = 0;
  for (;;) {
    const r = p.push(buf, at);
    if (r.kind !== 'head') throw t.fail(`not a head: ${reasonOf(r)}`);
    const f = responseFraming(r.head, 'GET');
    seen.push([r.head.status, f.kind]);
    at = r.bodyOffset + (f.kind === 'length' ? f.bytes : 0);
    t.throws(() => p.push(buf, at), /reset/, 'a spent parser refuses to go on');
    p.reset();
    if (at === buf.length) break;
  }
  t.same(seen, [
    [100, 'none'],
    [103, 'none'],
    [200, 'length'],
    [404, 'length'],
  ]);
  // the headers of one head do not leak into the next
  const q = new ResponseHeadParser();
  const a = q.push(Buffer.from(head('Connection: close\r\nContent-Length: 1\r\nKeep-Alive: timeout=1\r\n')));
  t.match(a, { kind: 'head', head: { connectionClose: true, contentLength: 1, keepAliveTimeoutMs: 1000 } });
  q.reset();
  // (a second Content-Length would be a duplicate if it did)
  t.match(q.push(Buffer.from(head('Content-Length: 1\r\n', 'HTTP/1.1 200'))), {
    kind: 'head',
    head: {
      connectionClose: false,
      contentLength: 1,
      keepAliveTimeoutMs: undefined,
      headers: ['Content-Length', '1'],
    },
  });
  // a reset after a split line forgets it
  const s = new ResponseHeadParser();
  t.equal(s.push(Buffer.from('HTTP/1.1 200 OK\r\nCont')).kind, 'more');
  s.reset();
  t.equal(reasonOf(s.push(Buffer.from(head('')))), 'head');
});

t.test('responseFraming: the method and status decide before the fields', async (t) => {
  const cases: [string, string, string, ReturnType<typeof responseFraming>][] = [
    ['HTTP/1.1 200 OK', 'Content-Length: 5\r\n', 'HEAD', { kind: 'none' }],
    ['HTTP/1.1 200 OK', 'Transfer-Encoding: chunked\r\n', 'HEAD', { kind: 'none' }],
    ['HTTP/1.1 200 OK', '', 'HEAD', { kind: 'none' }],
    ['HTTP/1.1 100 Continue', '', 'POST', { kind: 'none' }],
    ['HTTP/1.1 101 Switching Protocols', '', 'GET', { kind: 'none' }],
    ['HTTP/1.1 103 Early Hints', 'Content-Length: 5\r\n', 'GET', { kind: 'none' }],
    ['HTTP/1.1 204 No Content', 'Content-Length: 5\r\n', 'DELETE', { kind: 'none' }],
    ['HTTP/1.1 204 No Content', '', 'GET', { kind: 'none' }],
    ['HTTP/1.1 304 Not Modified', 'Content-Length: 1234\r\n', 'GET', { kind: 'none' }],
    ['HTTP/1.1 304 Not Modified', 'Transfer-Encoding: chunked\r\n', 'GET', { kind: 'none' }],
    ['HTTP/1.1 200 OK', 'Transfer-Encoding: chunked\r\n', 'GET', { kind: 'chunked' }],
    ['HTTP/1.1 205 Reset Content', 'Transfer-Encoding: chunked\r\n', 'POST', { kind: 'chunked' }],
    ['HTTP/1.1 200 OK', 'Content-Length: 5\r\n', 'GET', { kind: 'length', bytes: 5 }],
    ['HTTP/1.1 200 OK', 'Content-Length: 0\r\n', 'POST', { kind: 'length', bytes: 0 }],
    ['HTTP/1.1 500 Oops', 'Content-Length: 7\r\n', 'PUT', { kind: 'length', bytes: 7 }],
    ['HTTP/1.1 200 OK', '', 'GET', { kind: 'close' }],
    ['HTTP/1.0 200 OK', '', 'GET', { kind: 'close' }],
    ['HTTP/1.1 404 Not Found', 'Connection: keep-alive\r\n', 'GET', { kind: 'close' }],
  ];
  for (const [status, lines, method, framing] of cases)
    t.same(
      responseFraming(headOf(t, head(lines, status)), method),
      framing,
      `${method} ${status} ${lines.trim()}`,
    );
});
