/**
 * The head parser against node's own parser (llhttp, strict: no lenient flag), on heads from a
 * grammar-aware generator and mutator (seeded, so a failure is reproducible by its case
 * number). Properties:
 * - whenever llhttp refuses a head, ours refuses it too;
 * - whenever ours accepts one, llhttp accepts it ending at the same byte, with the same method,
 *   target, version and header list, and frames the body the same way;
 * - every head llhttp accepts and ours refuses is refused for a reason docs/parsing.md lists
 *   as deliberate extra strictness (the tally is printed, grouped by reason).
 * The chunked decoder gets the same treatment on generated and mutated chunked bodies:
 * llhttp refuses ⇒ ours refuses; both accept ⇒ same data, same end; extra refusals documented.
 * CLIBROKER_FUZZ_CASES sets the number of cases (20000 by default), CLIBROKER_FUZZ_SEED the seed.
 */
import t from 'tap';
import { type ChunkedResult, ChunkedDecoder } from '../../src/broker/http1/chunked.js';
import { type HeadResult, HeadParser, METHODS, type ParsedHead } from '../../src/broker/http1/head-parser.js';
import { DEFAULT_LIMITS } from '../../src/broker/types.js';
import {
  byCount,
  CONTENT_LENGTHS,
  headOf,
  documentedExtraReasons,
  HTTPParser,
  INTERESTING,
  LL_METHODS,
  type LlParser,
  llExec,
  llHeadEndsAt,
  llReadsChunked,
  llReadsLength,
  llTracksBody,
  mutateBytes,
  mutatedHead,
  oursClosed,
  pick,
  reportHeadTally,
  runHeadDifferential,
} from '../helpers/differential.js';
import { rng } from '../helpers/rng.js';

const MAX_HEAD = DEFAULT_LIMITS.maxHeaderBytes;
const CASES = Number(process.env['CLIBROKER_FUZZ_CASES'] ?? 20_000);
const SEED = Number(process.env['CLIBROKER_FUZZ_SEED'] ?? 0x5eed);

// ---- llhttp ----

/** llhttp reports a method by its own enum value: learn them by parsing each known method once. */
const METHOD_BY_CODE = new Map<number, string>();
function methodName(code: number): string {
  return METHOD_BY_CODE.get(code) ?? `#${code}`;
}
for (const m of LL_METHODS) {
  const p = new HTTPParser();
  p.initialize(HTTPParser.REQUEST, {}, MAX_HEAD, HTTPParser.kLenientNone);
  p[HTTPParser.kOnHeadersComplete] = (_a: number, _b: number, _h: unknown, code: number) => {
    METHOD_BY_CODE.set(code, m);
  };
  p.execute(Buffer.from(`${m} ${m === 'CONNECT' ? 'h:1' : '/'} HTTP/1.1\r\n\r\n`));
}

interface LlView {
  error?: string;
  /** the head completed; with what */
  head?: { version: string; headers: string[]; method: string; url: string; upgrade: boolean };
  complete: boolean;
  body: number;
}

function llParser(view: LlView): LlParser {
  const p = new HTTPParser();
  p.initialize(HTTPParser.REQUEST, {}, MAX_HEAD, HTTPParser.kLenientNone);
  let pre: string[] = [];
  let preUrl = '';
  p[HTTPParser.kOnHeaders] = (h: string[], u: string) => {
    pre = pre.concat(h);
    preUrl += u ?? '';
  };
  p[HTTPParser.kOnHeadersComplete] = (
    maj: number,
    min: number,
    h: string[] | undefined,
    m: number,
    u: string | undefined,
    _sc: unknown,
    _sm: unknown,
    upgrade: boolean,
  ) => {
    view.head ??= {
      version: `${maj}.${min}`,
      headers: pre.concat(h ?? []),
      method: methodName(m),
      url: preUrl + (u ?? ''),
      upgrade,
    };
  };
  return llTracksBody(p, view);
}

// ---- generator ----

const TE_VALUES = [
  'chunked',
  ' chunked',
  'chunked, identity',
  'Chunked',
  'identity',
  'gzip, chunked',
  'chunked ',
  'chunked;q=1',
  'chunked\t',
  '\tchunked',
  '',
];
const METHOD_POOL = [...METHODS, 'get', 'Get', 'CONNECT', 'FOO', 'PRI', 'DESCRIBE', 'G ET', 'GET\t', ''];
const TARGETS = [
  '/',
  '/a/b?c=d&e=f',
  '/%2e%2e/x',
  '/a%zz',
  'http://api.example.com/x',
  'api.example.com:443',
  '*',
  '/a#frag',
  '/é',
  '/~user/[x]',
  '//x',
  '/a?b=c|d{e}',
];
const VERSIONS = ['HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9', 'HTTP/1.2', 'http/1.1', 'HTTP/1.10', 'HTTP/1.1 '];
const NAMES = [
  'Accept',
  'User-Agent',
  'Content-Type',
  'X-Request-Id',
  'Accept-Encoding',
  'Cookie',
  'X-A',
  'a',
  'X_Y',
  'Content-Length',
  'Transfer-Encoding',
  'Connection',
  'Upgrade',
  'Expect',
  'Host',
];
const VALUES = [
  '*/*',
  'curl/8.5.0',
  'application/json',
  'a b',
  '  padded  ',
  '',
  'x\ty',
  'é',
  'keep-alive',
  'close',
  'upgrade',
  'keep-alive, Upgrade',
  ',',
  'a,,b',
  '100-continue',
  'websocket',
  'api.example.com',
  'api.example.com:443',
  '[::1]:443',
  'a b.com',
  'host:',
  'host:99999',
  'close\t',
  'x,\tclose',
];

function generate(r: () => number): Buffer {
  const method =
    r() < 0.85 ? pick(r, ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']) : pick(r, METHOD_POOL);
  const target = r() < 0.7 ? `/repos/o/r/issues?page=${Math.floor(r() * 9)}` : pick(r, TARGETS);
  const version = r() < 0.8 ? 'HTTP/1.1' : pick(r, VERSIONS);
  const lines: string[] = [`${method} ${target} ${version}`];
  const fields: string[] = [];
  if (r() < 0.9) fields.push(`Host: ${r() < 0.9 ? 'api.example.com' : pick(r, VALUES)}`);
  const n = Math.floor(r() * 6);
  for (let i = 0; i < n; i++)
    fields.push(`${r() < 0.8 ? pick(r, NAMES.slice(0, 9)) : pick(r, NAMES)}: ${pick(r, VALUES)}`);
  if (r() < 0.3)
    fields.push(`Content-Length: ${r() < 0.6 ? String(Math.floor(r() * 40)) : pick(r, CONTENT_LENGTHS)}`);
  if (r() < 0.2) fields.push(`Transfer-Encoding: ${pick(r, TE_VALUES)}`);
  // shuffle
  for (let i = fields.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [fields[i], fields[j]] = [fields[j]!, fields[i]!];
  }
  lines.push(...fields);
  return mutatedHead(r, lines, {
    names: NAMES,
    values: VALUES,
    contentLengths: CONTENT_LENGTHS,
    transferEncodings: TE_VALUES,
    longName: 40_000,
  });
}

// ---- the comparison ----

/** llhttp's run over the same bytes our head took, and its reading of the body framing. */
function compareAccepted(stream: Buffer, res: Extract<HeadResult, { kind: 'head' }>): string | undefined {
  const end = res.bodyOffset;
  const view: LlView = { complete: false, body: 0 };
  const p = llParser(view);
  const early = llHeadEndsAt(p, view, stream, end);
  if (early) return early;
  // (read again: TypeScript narrowed it before llExec filled it in)
  const ll = headOf(view);
  if (!ll) return 'llhttp did not end the head there';
  const h = res.head;
  if (ll.method !== h.method) return `method ${ll.method} vs ${h.method}`;
  if (ll.url !== h.target) return `target ${ll.url} vs ${h.target}`;
  if (ll.version !== h.version) return `version ${ll.version} vs ${h.version}`;
  if (JSON.stringify(ll.headers) !== JSON.stringify(h.headers)) return 'headers differ';
  if (ll.upgrade) return h.upgrade ? undefined : 'llhttp upgraded, ours has no upgrade';
  // framing: llhttp must end the message exactly where our framing says
  const f = h.framing;
  if (f.kind === 'none') return view.complete ? undefined : 'llhttp expects a body';
  if (view.complete) return 'llhttp expects no body';
  if (f.kind === 'length') return llReadsLength(p, view, f.bytes);
  return llReadsChunked(p, view);
}

function llWhole(stream: Buffer): LlView {
  const view: LlView = { complete: false, body: 0 };
  llExec(llParser(view), view, stream);
  return view;
}

t.test(`differential: ${CASES} generated heads against llhttp (strict)`, async (t) => {
  const r = rng(SEED);
  const tally = runHeadDifferential({
    cases: CASES,
    documented: documentedExtraReasons('Stricter than llhttp'),
    next: (i) => {
      const input = generate(r);
      // every fourth case with HTTP/1.0 allowed, the option the broker may turn on
      return { input, ...oursClosed(new HeadParser({ allowHttp10: i % 4 === 3 }), input) };
    },
    compare: compareAccepted,
    llAccepts: (stream) => llWhole(stream).head !== undefined,
  });
  const head = [
    `${CASES} cases (seed ${SEED}) in ${tally.ms} ms`,
    `both refuse ${tally.bothRefuse} (ours: ${byCount(tally.agreed)})`,
    `both accept ${tally.bothAccept}`,
  ];
  reportHeadTally(t, tally, head, CASES);
});

t.test('the method list is a subset of what llhttp knows', async (t) => {
  for (const m of METHODS) t.ok(LL_METHODS.includes(m), m);
  t.notOk(METHODS.has('CONNECT'));
});

// ---- chunked bodies ----

const CHUNKED_HEAD = Buffer.from(
  'POST / HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n',
);
const CHUNK_INTERESTING = [...INTERESTING, ';', '=', '0', 'a', 'F', 'x', '-', '+'];

function generateChunked(r: () => number): Buffer {
  const parts: string[] = [];
  const n = Math.floor(r() * 4);
  for (let i = 0; i < n; i++) {
    const len = Math.floor(r() * 20) + 1;
    let size = len.toString(16);
    const v = r();
    if (v < 0.1) size = size.toUpperCase();
    else if (v < 0.15) size = `000${size}`;
    else if (v < 0.18) size = `0000000000000000${size}`;
    else if (v < 0.22) size = `${size};ext=1`;
    else if (v < 0.24) size = `${size};a="q"`;
    else if (v < 0.26) size = `${size} `;
    parts.push(`${size}\r\n${'d'.repeat(len)}\r\n`);
  }
  const last = r();
  parts.push(last < 0.1 ? '0\r\nX-Trailer: 1\r\n\r\n' : last < 0.13 ? '0;e\r\n\r\n' : '0\r\n\r\n');
  const bytes = [...Buffer.from(parts.join(''), 'latin1')];
  const mutations = r() < 0.5 ? 0 : 1 + Math.floor(r() * 2);
  mutateBytes(r, bytes, mutations, CHUNK_INTERESTING);
  return Buffer.from(bytes);
}

/** llhttp on the head then `body[0, upTo)`: whether it refused, completed, and the data. */
function llChunked(body: Buffer, upTo: number): { error?: string; complete: boolean; data: string } {
  const out: { error?: string; complete: boolean; data: string } = { complete: false, data: '' };
  const p = new HTTPParser();
  p.initialize(HTTPParser.REQUEST, {}, MAX_HEAD, HTTPParser.kLenientNone);
  p[HTTPParser.kOnBody] = (b: Buffer) => {
    out.data += b.toString('latin1');
  };
  p[HTTPParser.kOnMessageComplete] = () => {
    out.complete = true;
  };
  for (const b of [CHUNKED_HEAD, body.subarray(0, upTo)]) {
    if (b.length === 0) continue;
    const r = p.execute(b);
    if (typeof r !== 'number') {
      out.error = r.code ?? 'error';
      break;
    }
  }
  return out;
}

t.test(
  `differential: ${Math.ceil(CASES / 4)} generated chunked bodies against llhttp (strict)`,
  async (t) => {
    const documented = documentedExtraReasons('Chunked bodies: stricter than llhttp');
    const r = rng(SEED ^ 0xc0de);
    const failures: string[] = [];
    const extra = new Map<string, number>();
    const agreed = new Map<string, number>();
    const examples = new Map<string, string>();
    let bothAccept = 0;
    for (let i = 0; i < Math.ceil(CASES / 4); i++) {
      const body = generateChunked(r);
      let data = '';
      const d = new ChunkedDecoder({ onData: (b, s, e) => (data += b.toString('latin1', s, e)) });
      const res: ChunkedResult = d.push(body);
      const show = JSON.stringify(body.toString('latin1').slice(0, 120));
      if (res.kind === 'done') {
        // llhttp ends the message at the same byte, with the same data
        const before = llChunked(body, res.end - 1);
        const at = llChunked(body, res.end);
        if (before.error || at.error)
          failures.push(`#${i} ours accepted, llhttp refused (${before.error ?? at.error}): ${show}`);
        else if (before.complete || !at.complete)
          failures.push(`#${i} llhttp ends the body elsewhere: ${show}`);
        else if (at.data !== data) failures.push(`#${i} data differs: ${show}`);
        else bothAccept++;
        continue;
      }
      const ll = llChunked(body, body.length);
      if (res.kind === 'more') {
        // ours has read nothing wrong so far: llhttp must neither have refused nor ended the body
        if (ll.error) failures.push(`#${i} llhttp refused (${ll.error}), ours wants more: ${show}`);
        if (ll.complete) failures.push(`#${i} llhttp ended the body, ours wants more: ${show}`);
        continue;
      }
      if (ll.complete && !ll.error) {
        extra.set(res.reason, (extra.get(res.reason) ?? 0) + 1);
        if (!examples.has(res.reason)) examples.set(res.reason, show);
        if (!documented.has(res.reason))
          failures.push(`#${i} undocumented extra refusal ${res.reason}: ${show}`);
      } else agreed.set(res.reason, (agreed.get(res.reason) ?? 0) + 1);
    }
    const fmt = (m: Map<string, number>) => [...m].map(([k, n]) => `${k} ${n}`).join(', ');
    t.comment(`both accept ${bothAccept}; both refuse (ours: ${fmt(agreed)})`);
    t.comment(`llhttp accepts and ours refuses (deliberate, by reason): ${fmt(extra)}`);
    for (const [k, v] of examples) t.comment(`  ${k} e.g. ${v}`);
    for (const f of failures.slice(0, 20)) t.comment(f);
    t.equal(failures.length, 0, 'no disagreement (the first 20 are printed above)');
    t.ok(bothAccept > CASES / 40, 'the generator reaches accepted bodies');
  },
);

t.test('the comparison catches what it is for', async (t) => {
  const accepted = (text: string): { stream: Buffer; res: Extract<HeadResult, { kind: 'head' }> } => {
    const stream = Buffer.from(text, 'latin1');
    const res = new HeadParser().push(stream);
    if (res.kind !== 'head') throw new Error(`not a head: ${text}`);
    return { stream, res };
  };
  const good = accepted(`POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nA: b\r\n\r\n`);
  t.equal(compareAccepted(good.stream, good.res), undefined, 'agreement');
  const lie = (change: (h: ParsedHead) => ParsedHead) => ({ ...good.res, head: change(good.res.head) });
  t.match(
    compareAccepted(
      good.stream,
      lie((h) => ({ ...h, framing: { kind: 'length', bytes: 4 } })),
    ),
    /length/,
  );
  t.match(
    compareAccepted(
      good.stream,
      lie((h) => ({ ...h, framing: { kind: 'chunked' } })),
    ),
    /chunked/,
  );
  t.match(
    compareAccepted(
      good.stream,
      lie((h) => ({ ...h, framing: { kind: 'none' } })),
    ),
    /expects a body/,
  );
  t.match(
    compareAccepted(
      good.stream,
      lie((h) => ({ ...h, headers: ['Host', 'h'] })),
    ),
    /headers differ/,
  );
  t.match(
    compareAccepted(
      good.stream,
      lie((h) => ({ ...h, target: '/y' })),
    ),
    /target/,
  );
  t.match(
    compareAccepted(good.stream, { ...good.res, bodyOffset: good.res.bodyOffset - 2 }),
    /did not end the head/,
  );
  // bytes llhttp refuses, claimed as a head
  const bad = Buffer.from('POST /x HTTP/1.1\r\nHost: h\r\nA: b\x01\r\n\r\n', 'latin1');
  t.match(compareAccepted(bad, { ...good.res, bodyOffset: bad.length }), /llhttp refused/);
});
