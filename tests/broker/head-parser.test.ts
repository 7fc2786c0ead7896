/**
 * The strict head parser and chunked decoder on their own: one head per refusal reason, the
 * parsed head's fields and flags, the limits at their edges, and the same result however the
 * bytes are split (byte by byte, and every split in two).
 */
import t from 'tap';
import { type ChunkedRefusal, type ChunkedResult, ChunkedDecoder } from '../../src/broker/http1/chunked.js';
import {
  DEFAULT_MAX_HEAD_BYTES,
  DEFAULT_MAX_HEADERS,
  type HeadParserOptions,
  type HeadRefusal,
  HeadParser,
  parseHead,
} from '../../src/broker/http1/head-parser.js';
import { DEFAULT_LIMITS } from '../../src/broker/types.js';
import { PARSING_DOC as DOC, reasonOf, refusalsEarned, splitsAgree } from '../helpers/heads.js';

const H = 'Host: api.example.com\r\n';
const head = (lines: string, start = 'GET / HTTP/1.1'): string => `${start}\r\n${lines}\r\n`;

/** One head per reason (the Record makes the compiler check none is missing). */
const REFUSED: Record<HeadRefusal, string | [string, HeadParserOptions]> = {
  'head-too-large': [head(`${H}X-Big: ${'a'.repeat(200)}\r\n`), { maxHeadBytes: 100 }],
  'too-many-headers': [head(`${H}A: 1\r\nB: 2\r\n`), { maxHeaders: 2 }],
  'leading-empty-line': `\r\n${head(H)}`,
  'bare-lf': `GET / HTTP/1.1\n${H}\r\n`,
  'bare-cr': head(`${H}X-A: a\rb\r\n`),
  nul: head(`${H}X-A: a\0b\r\n`),
  'bad-request-line': head(H, 'GET  / HTTP/1.1'),
  'bad-method': head(H, 'get / HTTP/1.1'),
  'connect-method': head(H, 'CONNECT api.example.com:443 HTTP/1.1'),
  'bad-target': head(H, 'GET http://api.example.com/ HTTP/1.1'),
  'bad-version': head(H, 'GET / HTTP/1.0'),
  'bad-header-name': head(`${H}X-A : b\r\n`),
  'bad-header-value': head(`${H}X-A: a\x7fb\r\n`),
  'obs-fold': head(`${H}X-A: a\r\n b\r\n`),
  'duplicate-content-length': head(`${H}Content-Length: 5\r\nContent-Length: 5\r\n`),
  'bad-content-length': head(`${H}Content-Length: +5\r\n`),
  'duplicate-transfer-encoding': head(`${H}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n`),
  'te-not-chunked': head(`${H}Transfer-Encoding: gzip, chunked\r\n`),
  'te-and-content-length': head(`${H}Transfer-Encoding: chunked\r\nContent-Length: 5\r\n`),
  'http10-te': [head(`${H}Transfer-Encoding: chunked\r\n`, 'POST / HTTP/1.0'), { allowHttp10: true }],
  'missing-host': head('Accept: */*\r\n'),
  'duplicate-host': head(`${H}${H}`),
  'bad-host': head('Host: api.example.com@evil\r\n'),
  'bad-connection': head(`${H}Connection: keep-alive,,close\r\n`),
};

t.test('each refusal reason, from the head that earns it', async (t) => {
  refusalsEarned(t, REFUSED, parseHead);
});

t.test('more refusals: the spellings that must not pass', async (t) => {
  const cases: [string, HeadRefusal][] = [
    [`\n${head(H)}`, 'bare-lf'],
    [`GET / HTTP/1.1\r\r\n${H}\r\n`, 'bare-cr'],
    [head(H, 'GET /\0 HTTP/1.1'), 'nul'],
    [head(`X-A\0: b\r\n${H}`), 'nul'],
    [head(H, 'G\0ET / HTTP/1.1'), 'nul'],
    [head(H, 'GET / HTTP/1.1\0'), 'nul'],
    [head(H, 'GET / HTTP/1.1\r'), 'bare-cr'],
    [head(H, ' GET / HTTP/1.1'), 'bad-request-line'],
    [head(H, 'GET'), 'bad-request-line'],
    [head(H, 'GET /'), 'bad-request-line'],
    [head(H, 'GET / '), 'bad-version'],
    [head(H, 'GET / HTTP/1.1 '), 'bad-version'],
    [head(H, 'GET /  HTTP/1.1'), 'bad-version'],
    [head(H, 'GET / HTTP/2.0'), 'bad-version'],
    [head(H, 'GET / http/1.1'), 'bad-version'],
    [head(H, 'GET / HTTP/1.10'), 'bad-version'],
    [head(H, 'GET\t/ HTTP/1.1'), 'bad-method'],
    [head(H, 'FOO / HTTP/1.1'), 'bad-method'],
    [head(H, 'Get / HTTP/1.1'), 'bad-method'],
    [head(H, 'GET * HTTP/1.1'), 'bad-target'],
    [head(H, 'OPTIONS * HTTP/1.1'), 'bad-target'],
    [head(H, 'GET api.example.com:443 HTTP/1.1'), 'bad-target'],
    [head(H, 'GET /a#b HTTP/1.1'), 'bad-target'],
    [head(H, 'GET /\xe9 HTTP/1.1'), 'bad-target'],
    [head(H, 'GET /\x7f HTTP/1.1'), 'bad-target'],
    [head(H, 'GET /a\tb HTTP/1.1'), 'bad-target'],
    [head(`${H}: b\r\n`), 'bad-header-name'],
    [head(`${H}X-A\t: b\r\n`), 'bad-header-name'],
    [head(`${H}X\xe9: b\r\n`), 'bad-header-name'],
    [head(`${H}X"A: b\r\n`), 'bad-header-name'],
    [head(`${H}no colon\r\n`), 'bad-header-name'],
    [head(`${H}nocolon\r\n`), 'bad-header-name'],
    [head(`${H}\tX-A: b\r\n`), 'obs-fold'],
    [head(`${H}X-A: \x01\r\n`), 'bad-header-value'],
    [head(`${H}X-A: a\x0bb\r\n`), 'bad-header-value'],
    ...['', ' ', '-1', '0x5', '5 5', '05', '00', '5,5', '1e3', '1234567890123456', '5.0'].map(
      (v): [string, HeadRefusal] => [head(`${H}Content-Length: ${v}\r\n`), 'bad-content-length'],
    ),
    ...[
      'Chunked',
      'CHUNKED',
      'chunked, identity',
      'identity',
      'chunked;q=1',
      '',
      'chunked,',
      '"chunked"',
    ].map((v): [string, HeadRefusal] => [head(`${H}Transfer-Encoding: ${v}\r\n`), 'te-not-chunked']),
    [head(`${H}Transfer-Encoding: chunked\r\ntransfer-encoding: chunked\r\n`), 'duplicate-transfer-encoding'],
    [head(`${H}content-length: 1\r\nCONTENT-LENGTH: 1\r\n`), 'duplicate-content-length'],
    // a HTAB after a token that decides something (node's parser takes it as part of the token)
    [head(`${H}Content-Length: 5\t\r\n`), 'bad-content-length'],
    [head(`${H}Transfer-Encoding: chunked \t\r\n`), 'te-not-chunked'],
    [head(`${H}Connection: close\t, x\r\n`), 'bad-connection'],
    [head(`${H}Connection: x, close\t\r\n`), 'bad-connection'],
    [head(`${H}HOST: api.example.com\r\n`), 'duplicate-host'],
    ...['', 'a b', 'host:', 'host:123456', 'h%41', '[::1', 'a/b', 'a@b', 'h,h'].map(
      (v): [string, HeadRefusal] => [head(`Host: ${v}\r\n`), 'bad-host'],
    ),
    ...['', ',', 'close,', ',close', 'a b', 'x"y'].map((v): [string, HeadRefusal] => [
      head(`${H}Connection: ${v}\r\n`),
      'bad-connection',
    ]),
  ];
  for (const [text, reason] of cases)
    t.equal(reasonOf(parseHead(Buffer.from(text, 'latin1'))), reason, JSON.stringify(text));
});

t.test('a head: its fields, trimmed values, framing and flags', async (t) => {
  const text =
    'POST /repos/o/r/issues?x=1 HTTP/1.1\r\nHost: api.example.com:443\r\nContent-Length: 12\r\n' +
    'X-Pad: \t a  b \t\r\nX-Empty:\r\nX-Obs: caf\xe9\r\nExpect: 100-Continue\r\nConnection: keep-alive, Close\r\n\r\nbody';
  const r = parseHead(Buffer.from(text, 'latin1'));
  if (r.kind !== 'head') throw t.fail(`not a head: ${reasonOf(r)}`);
  t.equal(r.bodyOffset, text.length - 4);
  t.same(r.head, {
    method: 'POST',
    target: '/repos/o/r/issues?x=1',
    version: '1.1',
    headers: [
      'Host',
      'api.example.com:443',
      'Content-Length',
      '12',
      'X-Pad',
      'a  b',
      'X-Empty',
      '',
      'X-Obs',
      'caf\xe9',
      'Expect',
      '100-Continue',
      'Connection',
      'keep-alive, Close',
    ],
    host: 'api.example.com:443',
    framing: { kind: 'length', bytes: 12 },
    expectContinue: true,
    otherExpectation: false,
    connectionClose: true,
    upgrade: false,
    headBytes: text.length - 4,
  });
  const framing = (extra: string) => {
    const x = parseHead(Buffer.from(head(`${H}${extra}`)));
    return x.kind === 'head' ? x.head.framing : reasonOf(x);
  };
  t.same(framing(''), { kind: 'none' });
  t.same(framing('Content-Length: 0\r\n'), { kind: 'none' }, 'a zero length is no body');
  t.same(framing('Content-Length: 999999999999999\r\n'), { kind: 'length', bytes: 999999999999999 });
  t.same(framing('Transfer-Encoding:  chunked \r\n'), { kind: 'chunked' }, 'OWS around chunked is trimmed');
  t.same(framing('Transfer-Encoding: \tchunked\r\n'), { kind: 'chunked' }, 'HTAB before it too');
  t.same(framing('Content-Length: \t5 \r\n'), { kind: 'length', bytes: 5 }, 'HTAB before, SP after');
  const flags = parseHead(Buffer.from(head(`${H}Upgrade: websocket\r\nExpect: something\r\n`)));
  t.match(flags, {
    kind: 'head',
    head: { upgrade: true, expectContinue: false, otherExpectation: true, connectionClose: false },
  });
  const closes = (value: string) => {
    const x = parseHead(Buffer.from(head(`${H}Connection: ${value}\r\n`)));
    return x.kind === 'head' ? x.head.connectionClose : reasonOf(x);
  };
  t.equal(closes('Close'), true, 'one token, any case');
  t.equal(closes('KEEP-ALIVE'), false);
  t.equal(closes('keep-alive, CLOSE'), true, 'close anywhere in the list');
  t.equal(closes('closed'), false, 'a token, not a prefix');
  t.equal(closes('clos'), false);
});

t.test('HTTP/1.0 only when allowed, and then never kept alive', async (t) => {
  const text = head(`${H}Connection: keep-alive\r\n`, 'GET / HTTP/1.0');
  t.equal(reasonOf(parseHead(Buffer.from(text))), 'bad-version');
  t.match(parseHead(Buffer.from(text), { allowHttp10: true }), {
    kind: 'head',
    head: { version: '1.0', connectionClose: true },
  });
  t.equal(reasonOf(parseHead(Buffer.from(head(H, 'GET / HTTP/1.0')), { allowHttp10: true })), 'head');
  t.equal(
    reasonOf(parseHead(Buffer.from(head('', 'GET / HTTP/1.0')), { allowHttp10: true })),
    'missing-host',
  );
});

t.test('limits, at their edges', async (t) => {
  const text = head(`${H}X-Pad: ${'p'.repeat(100)}\r\n`);
  const n = Buffer.byteLength(text);
  t.equal(reasonOf(parseHead(Buffer.from(text), { maxHeadBytes: n })), 'head', 'exactly the limit');
  t.equal(reasonOf(parseHead(Buffer.from(text), { maxHeadBytes: n - 1 })), 'head-too-large', 'one over');
  // the limit counts the head only, not the body after it
  t.equal(reasonOf(parseHead(Buffer.from(text + 'x'.repeat(100)), { maxHeadBytes: n })), 'head');
  // trickled: refused as soon as the limit is passed, without waiting for a line end
  const p = new HeadParser({ maxHeadBytes: 10 });
  t.equal(p.push(Buffer.from('GET /aaaaa')).kind, 'more');
  t.equal(reasonOf(p.push(Buffer.from('a'))), 'head-too-large');
  t.equal(DEFAULT_MAX_HEADERS, 256);
  t.equal(DEFAULT_MAX_HEAD_BYTES, DEFAULT_LIMITS.maxHeaderBytes, "the parser's own default is the broker's");
  const big = head(`${H}X-Big: ${'b'.repeat(DEFAULT_LIMITS.maxHeaderBytes)}\r\n`);
  t.equal(reasonOf(parseHead(Buffer.from(big))), 'head-too-large', "the broker's maxHeaderBytes by default");
  const many = (k: number) => head(H + 'X: y\r\n'.repeat(k - 1));
  t.equal(reasonOf(parseHead(Buffer.from(many(DEFAULT_MAX_HEADERS)))), 'head');
  t.equal(reasonOf(parseHead(Buffer.from(many(DEFAULT_MAX_HEADERS + 1)))), 'too-many-headers');
});

t.test('the same result however the head is split, CRLF included', async (t) => {
  const heads: [string, HeadParserOptions?][] = [
    [
      'POST /a?b=c HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 3\r\nX-V:  v \r\nConnection: close\r\n\r\nabc',
    ],
    ['PUT /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n'],
    [head(H)],
    [head(H + 'X: y\r\n'.repeat(3)), { maxHeaders: 3 }],
    [head(`${H}X-Pad: ${'p'.repeat(60)}\r\n`), { maxHeadBytes: 80 }],
    [head(`${H}X-Pad: ${'p'.repeat(60)}\r\n`), { maxHeadBytes: 90 }],
    ...Object.values(REFUSED).map((c): [string, HeadParserOptions?] => (typeof c === 'string' ? [c] : c)),
    [`GET / HTTP/1.1\r\n${H}\r\r\n`],
    [`GET / HTTP/1.1\r\n${H}\n`],
  ];
  for (const [text, opts] of heads) splitsAgree(t, () => new HeadParser(opts), text);
});

t.test('one parser, reset between pipelined heads', async (t) => {
  const two = Buffer.from(`${head(H, 'GET /1 HTTP/1.1')}${head(H, 'GET /2 HTTP/1.1')}`);
  const p = new HeadParser();
  const a = p.push(two);
  if (a.kind !== 'head') throw t.fail('first');
  t.equal(a.head.target, '/1');
  t.throws(() => p.push(two), /reset/, 'a spent parser refuses to go on');
  p.reset();
  const b = p.push(two.subarray(a.bodyOffset));
  t.match(b, { kind: 'head', head: { target: '/2', headers: ['Host', 'api.example.com'] } });
  // a reset after a split line forgets it
  const q = new HeadParser();
  t.equal(q.push(Buffer.from('GET / HTTP/1.1\r\nHo')).kind, 'more');
  q.reset();
  t.equal(reasonOf(q.push(Buffer.from(head(H)))), 'head');
});

// ---- the chunked decoder ----

function decode(pieces: Buffer[], opts: { maxBodyBytes?: number } = {}): { r: ChunkedResult; data: string } {
  let data = '';
  const d = new ChunkedDecoder({ ...opts, onData: (b, s, e) => (data += b.toString('latin1', s, e)) });
  let before = 0;
  for (const piece of pieces) {
    const r = d.push(piece);
    if (r.kind === 'done') return { r: { ...r, end: before + r.end }, data };
    if (r.kind !== 'more') return { r, data };
    before += piece.length;
  }
  return { r: { kind: 'more' }, data };
}

t.test('chunked: a body decoded, split anywhere', async (t) => {
  const body = '5\r\nhello\r\nA\r\n0123456789\r\na\r\nabcdefghij\r\n0\r\n\r\nNEXT';
  const whole = Buffer.from(body);
  const one = decode([whole]);
  t.same(one.r, { kind: 'done', end: body.length - 4, bodyBytes: 25 });
  t.equal(one.data, 'hello0123456789abcdefghij');
  t.same(decode([...whole].map((b) => Buffer.from([b]))), one, 'byte by byte');
  let bad = 0;
  for (let i = 1; i < whole.length; i++) {
    if (JSON.stringify(decode([whole.subarray(0, i), whole.subarray(i)])) !== JSON.stringify(one)) bad++;
  }
  t.equal(bad, 0, 'every 2-way split');
  t.same(decode([Buffer.from('0\r\n\r\n')]).r, { kind: 'done', end: 5, bodyBytes: 0 }, 'an empty body');
  t.same(
    decode([Buffer.from('0000000000005\r\nhello\r\n0\r\n\r\n')]).data,
    'hello',
    'leading zeros within 13 digits',
  );
  const d = new ChunkedDecoder();
  d.push(Buffer.from('0\r\n\r\n'));
  t.throws(() => d.push(Buffer.from('0\r\n\r\n')), /after the last chunk/);
});

t.test('chunked: each refusal', async (t) => {
  const cases: [string, ChunkedRefusal][] = [
    ['\r\n', 'bad-chunk-size'],
    [' 5\r\nhello\r\n0\r\n\r\n', 'bad-chunk-size'],
    ['5 \r\nhello\r\n0\r\n\r\n', 'bad-chunk-size'],
    ['+5\r\nhello\r\n0\r\n\r\n', 'bad-chunk-size'],
    ['0x5\r\nhello\r\n0\r\n\r\n', 'bad-chunk-size'],
    ['5\nhello\r\n0\r\n\r\n', 'bad-chunk-size'],
    ['5\r\rhello\r\n0\r\n\r\n', 'bad-chunk-size'],
    ['00000000000005\r\nhello\r\n0\r\n\r\n', 'bad-chunk-size'],
    ['fffffffffffffff\r\n', 'bad-chunk-size'],
    ['5;ext=1\r\nhello\r\n0\r\n\r\n', 'chunk-extension'],
    ['0;ext\r\n\r\n', 'chunk-extension'],
    [';\r\n', 'bad-chunk-size'],
    ['5\r\nhelloX\r\n0\r\n\r\n', 'bad-chunk-end'],
    ['5\r\nhello\n0\r\n\r\n', 'bad-chunk-end'],
    ['5\r\nhello\r\r0\r\n\r\n', 'bad-chunk-end'],
    ['0\r\nX-Trailer: 1\r\n\r\n', 'trailer'],
    ['0\r\nContent-Length: 5\r\n\r\n', 'trailer'],
    ['0\r\n\n', 'bad-last-chunk'],
    ['0\r\n\rX', 'bad-last-chunk'],
    ['6\r\nhello!\r\n0\r\n\r\n', 'body-too-large'],
  ];
  for (const [text, reason] of cases) {
    const got = decode([Buffer.from(text)], { maxBodyBytes: 5 }).r;
    t.equal(got.kind === 'refused' ? got.reason : got.kind, reason, JSON.stringify(text));
    t.match(DOC, `\`${reason}\``, `${reason} is in docs/parsing.md`);
  }
  t.same(
    decode([Buffer.from('5\r\nhello\r\n0\r\n\r\n')], { maxBodyBytes: 5 }).data,
    'hello',
    'exactly the limit',
  );
});
