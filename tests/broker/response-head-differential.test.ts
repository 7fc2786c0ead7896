/**
 * The response-head parser against node's own parser (llhttp in response mode, strict: no
 * lenient flag), on heads from a grammar-aware generator and mutator (seeded, so a failure is
 * reproducible by its case number). Properties:
 * - whenever llhttp refuses a head, ours refuses it too;
 * - whenever ours accepts one, llhttp accepts it ending at the same byte, with the same
 *   version, status, reason phrase and header list, and frames the body after it the same way
 *   for a GET (no body, a length, chunked, or to the end of the connection);
 * - where ours would keep the connection for another request, llhttp would too;
 * - every head llhttp accepts and ours refuses is refused for a reason docs/parsing.md lists
 *   in "Response heads: stricter than llhttp" (the tally is printed, grouped by reason).
 * CLIBROKER_FUZZ_CASES sets the number of cases (10000 by default), CLIBROKER_FUZZ_SEED the seed.
 */
import t from 'tap';
import {
  DEFAULT_MAX_RESPONSE_HEAD_BYTES,
  type ResponseHeadResult,
  ResponseHeadParser,
  responseFraming,
} from '../../src/broker/http1/response-head.js';
import {
  byCount,
  CONTENT_LENGTHS,
  headOf,
  documentedExtraReasons,
  HTTPParser,
  type LlParser,
  llExec,
  llHeadEndsAt,
  llReadsChunked,
  llReadsLength,
  llTracksBody,
  mutatedHead,
  oursClosed,
  pick,
  reportHeadTally,
  runHeadDifferential,
} from '../helpers/differential.js';
import { rng } from '../helpers/rng.js';

const MAX_HEAD = DEFAULT_MAX_RESPONSE_HEAD_BYTES;
const CASES = Number(process.env['CLIBROKER_FUZZ_CASES'] ?? 10_000);
const SEED = Number(process.env['CLIBROKER_FUZZ_SEED'] ?? 0x5eed);
const TABLE = 'Response heads: stricter than llhttp';

// ---- llhttp ----

interface LlView {
  error?: string;
  /** the head completed; with what */
  head?: {
    version: string;
    status: number;
    reason: string;
    headers: string[];
    upgrade: boolean;
    keepAlive: boolean;
  };
  complete: boolean;
  body: number;
}

/** llhttp reading a response to a GET: its head callback returns 0, so it frames the body itself. */
function llParser(view: LlView): LlParser {
  const p = new HTTPParser();
  p.initialize(HTTPParser.RESPONSE, {}, MAX_HEAD, HTTPParser.kLenientNone);
  let pre: string[] = [];
  p[HTTPParser.kOnHeaders] = (h: string[]) => {
    pre = pre.concat(h);
  };
  p[HTTPParser.kOnHeadersComplete] = (
    maj: number,
    min: number,
    h: string[] | undefined,
    _m: unknown,
    _u: unknown,
    status: number,
    reason: string | undefined,
    upgrade: boolean,
    keepAlive: boolean,
  ) => {
    view.head ??= {
      version: `${maj}.${min}`,
      status,
      reason: reason ?? '',
      headers: pre.concat(h ?? []),
      upgrade,
      keepAlive,
    };
    return 0;
  };
  return llTracksBody(p, view);
}

function llWhole(stream: Buffer): LlView {
  const view: LlView = { complete: false, body: 0 };
  llExec(llParser(view), view, stream);
  return view;
}

// ---- generator ----

const VERSIONS = [
  'HTTP/1.0',
  'HTTP/2.0',
  'HTTP/0.9',
  'HTTP/1.2',
  'http/1.1',
  'HTTP/1.10',
  'HTTP/1',
  'ICE/1.0',
  '',
];
const STATUSES = [
  '200',
  '201',
  '204',
  '206',
  '301',
  '304',
  '400',
  '404',
  '500',
  '100',
  '101',
  '103',
  '199',
  '599',
];
const ODD_STATUSES = [
  '099',
  '000',
  '600',
  '999',
  '20',
  '2000',
  '2x0',
  ' 200',
  '+20',
  '200\t',
  '-200',
  '２00',
];
const REASONS = ['OK', 'Not Found', '', 'a\tb', ' OK', 'caf\xe9', 'O\x01K', 'O\x7fK', 'Créé', 'x  y ', '\t'];
const TE_VALUES = [
  'chunked',
  ' chunked',
  'chunked, identity',
  'Chunked',
  'CHUNKED',
  'identity',
  'gzip',
  'gzip, chunked',
  'chunked ',
  'chunked;q=1',
  'chunked\t',
  '\tchunked',
  '',
];
const NAMES = [
  'Content-Type',
  'Date',
  'Server',
  'Set-Cookie',
  'ETag',
  'X-GitHub-Request-Id',
  'Link',
  'X-A',
  'a',
  'Content-Length',
  'Transfer-Encoding',
  'Connection',
  'Keep-Alive',
  'Proxy-Connection',
  'Upgrade',
];
const VALUES = [
  'application/json',
  'a b',
  '  padded  ',
  '',
  'x\ty',
  'é',
  'keep-alive',
  'Keep-Alive',
  'close',
  'CLOSE',
  'upgrade',
  'keep-alive, close',
  'close, keep-alive',
  'keep-alive, Upgrade',
  ',',
  'a,,b',
  'closed',
  'timeout=5',
  'timeout=5, max=100',
  'websocket',
  'h2c',
  'keep-alive\t',
  'close \t, x',
  'x,\tkeep-alive',
];

function generate(r: () => number): Buffer {
  const version = r() < 0.8 ? 'HTTP/1.1' : r() < 0.6 ? 'HTTP/1.0' : pick(r, VERSIONS);
  const status = r() < 0.9 ? pick(r, STATUSES) : pick(r, ODD_STATUSES);
  const reason = r() < 0.1 ? '' : ` ${r() < 0.7 ? 'OK' : pick(r, REASONS)}`;
  const lines: string[] = [`${version} ${status}${reason}`];
  const fields: string[] = [];
  const n = Math.floor(r() * 6);
  for (let i = 0; i < n; i++)
    fields.push(`${r() < 0.7 ? pick(r, NAMES.slice(0, 9)) : pick(r, NAMES)}: ${pick(r, VALUES)}`);
  if (r() < 0.4)
    fields.push(`Content-Length: ${r() < 0.6 ? String(Math.floor(r() * 40)) : pick(r, CONTENT_LENGTHS)}`);
  if (r() < 0.25) fields.push(`Transfer-Encoding: ${pick(r, TE_VALUES)}`);
  if (r() < 0.3) fields.push(`Connection: ${pick(r, VALUES)}`);
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
    longName: 20_000,
    connectionNames: ['Connection', 'Keep-Alive', 'Proxy-Connection'],
  });
}

// ---- the comparison ----

type Accepted = Extract<ResponseHeadResult, { kind: 'head' }>;

/**
 * llhttp's run over the same bytes our head took, and its reading of what follows for a GET.
 * `closesMore` is set when ours would close the connection where llhttp would keep it (safe).
 */
function compareAccepted(stream: Buffer, res: Accepted, note?: (what: string) => void): string | undefined {
  const end = res.bodyOffset;
  const view: LlView = { complete: false, body: 0 };
  const p = llParser(view);
  const early = llHeadEndsAt(p, view, stream, end);
  if (early) return early;
  // (read again: TypeScript narrowed it before llExec filled it in)
  const ll = headOf(view);
  if (!ll) return 'llhttp did not end the head there';
  const h = res.head;
  if (ll.version !== h.version) return `version ${ll.version} vs ${h.version}`;
  if (ll.status !== h.status) return `status ${ll.status} vs ${h.status}`;
  if (ll.reason !== h.reason) return `reason ${JSON.stringify(ll.reason)} vs ${JSON.stringify(h.reason)}`;
  if (JSON.stringify(ll.headers) !== JSON.stringify(h.headers)) return 'headers differ';
  const f = responseFraming(h, 'GET');
  const oursKeeps = !h.connectionClose && f.kind !== 'close';
  if (oursKeeps && !ll.keepAlive) return 'ours keeps the connection, llhttp would close it';
  if (!oursKeeps && ll.keepAlive) note?.(`ours closes where llhttp keeps alive (${h.version})`);
  // framing: llhttp must end the message exactly where ours says
  if (f.kind === 'none' || (f.kind === 'length' && f.bytes === 0))
    return view.complete ? undefined : 'llhttp expects a body';
  if (view.complete) return 'llhttp expects no body';
  if (f.kind === 'length') return llReadsLength(p, view, f.bytes);
  if (f.kind === 'chunked') return llReadsChunked(p, view);
  // to the end of the connection: whatever comes is body, until llhttp is told the input ended
  const rest = Buffer.from('3\r\nabc\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n\r\n');
  llExec(p, view, rest);
  if (view.error) return `llhttp refused a body read to the end (${view.error})`;
  if (view.complete) return 'llhttp ended a body ours reads to the end';
  const fin = p.finish();
  if (fin) return `llhttp refused the end of input (${fin.code ?? 'error'})`;
  return view.complete && view.body === rest.length ? undefined : 'llhttp did not read to the end';
}

t.test(`differential: ${CASES} generated response heads against llhttp (strict)`, async (t) => {
  const r = rng(SEED);
  const framings = new Map<string, number>();
  const notes = new Map<string, number>();
  const tally = runHeadDifferential({
    cases: CASES,
    documented: documentedExtraReasons(TABLE),
    next: () => {
      const input = generate(r);
      return { input, ...oursClosed(new ResponseHeadParser(), input) };
    },
    compare: (stream, result) => {
      const why = compareAccepted(stream, result, (what) => notes.set(what, (notes.get(what) ?? 0) + 1));
      if (!why) {
        const k = responseFraming(result.head, 'GET').kind;
        framings.set(k, (framings.get(k) ?? 0) + 1);
      }
      return why;
    },
    llAccepts: (stream) => llWhole(stream).head !== undefined,
  });
  const head = [
    `${CASES} cases (seed ${SEED}) in ${tally.ms} ms`,
    `both refuse ${tally.bothRefuse} (ours: ${byCount(tally.agreed)})`,
    `both accept ${tally.bothAccept} (framing for a GET: ${byCount(framings)})`,
    `accepted, kept-alive readings that differ on the safe side: ${byCount(notes) || 'none'}`,
  ];
  reportHeadTally(t, tally, head, CASES);
  for (const k of ['none', 'length', 'chunked', 'close'])
    t.ok(framings.has(k), `and accepted heads framed ${k}`);
});

t.test('the comparison catches what it is for', async (t) => {
  const accepted = (text: string): { stream: Buffer; res: Accepted } => {
    const stream = Buffer.from(text, 'latin1');
    const res = new ResponseHeadParser().push(stream);
    if (res.kind !== 'head') throw new Error(`not a head: ${text}`);
    return { stream, res };
  };
  const good = accepted('HTTP/1.1 200 OK\r\nContent-Length: 3\r\nA: b\r\n\r\n');
  t.equal(compareAccepted(good.stream, good.res), undefined, 'agreement');
  const lie = (change: Partial<Accepted['head']>): Accepted => ({
    ...good.res,
    head: { ...good.res.head, ...change },
  });
  t.match(compareAccepted(good.stream, lie({ contentLength: 4 })), /length 4 vs 3/);
  t.match(compareAccepted(good.stream, lie({ contentLength: 2 })), /length 2 vs/);
  t.match(compareAccepted(good.stream, lie({ contentLength: -1, chunked: true })), /chunked/);
  t.match(compareAccepted(good.stream, lie({ contentLength: -1 })), /ours keeps|end/);
  t.match(compareAccepted(good.stream, lie({ contentLength: -1, connectionClose: true })), /to the end/);
  t.match(compareAccepted(good.stream, lie({ status: 204 })), /status/);
  t.match(compareAccepted(good.stream, lie({ reason: 'Ok' })), /reason/);
  t.match(compareAccepted(good.stream, lie({ version: '1.0' })), /version/);
  t.match(compareAccepted(good.stream, lie({ headers: ['A', 'b'] })), /headers differ/);
  t.match(
    compareAccepted(good.stream, { ...good.res, bodyOffset: good.res.bodyOffset - 2 }),
    /did not end the head/,
  );
  // a head llhttp reads to the end of the connection, claimed as kept alive
  const eof = accepted('HTTP/1.1 200 OK\r\nA: b\r\n\r\n');
  t.match(compareAccepted(eof.stream, { ...eof.res, head: { ...eof.res.head, contentLength: 0 } }), /keeps/);
  const cl = accepted('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n');
  t.equal(compareAccepted(cl.stream, cl.res), undefined, 'read to the end, agreed');
  t.match(
    compareAccepted(cl.stream, { ...cl.res, head: { ...cl.res.head, contentLength: 32 } }),
    /expects|length/,
  );
  // bytes llhttp refuses, claimed as a head
  const bad = Buffer.from('HTTP/1.1 200 OK\r\nA: b\x01\r\n\r\n', 'latin1');
  t.match(compareAccepted(bad, { ...good.res, bodyOffset: bad.length }), /llhttp refused/);
});

t.test('the disagreements found, and how they were decided', async (t) => {
  const ll = (text: string, more = ''): LlView => llWhole(Buffer.from(text + more, 'latin1'));
  const reason = (text: string) => {
    const r = new ResponseHeadParser().push(Buffer.from(text, 'latin1'));
    return r.kind === 'refused' ? r.reason : r.kind;
  };
  // an unassigned 1xx with a length: llhttp reads a body (it skips one only for 100-103), the RFC says none
  const interim = 'HTTP/1.1 150 x\r\nContent-Length: 5\r\n\r\n';
  t.match(ll(interim, 'abcde'), { complete: true, body: 5 }, 'llhttp: 150 has a body');
  t.match(
    ll('HTTP/1.1 103 x\r\nContent-Length: 5\r\n\r\n'),
    { complete: true, body: 0 },
    'llhttp: 103 has none',
  );
  t.equal(reason(interim), 'bad-status', 'ours: refused');
  // CR CR ends llhttp's status line
  const crcr = 'HTTP/1.1 200 OK\r\rX-A: b\r\n\r\n';
  t.match(ll(crcr), { head: { headers: ['X-A', 'b'] } }, 'llhttp: a status line ended by CR CR');
  t.equal(reason(crcr), 'bare-cr');
  // chunked on HTTP/1.0
  const h10 = 'HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n';
  t.match(ll(h10, '0\r\n\r\n'), { complete: true }, 'llhttp: chunked on HTTP/1.0');
  t.equal(reason(h10), 'http10-te');
  // Proxy-Connection: close: llhttp closes, and so do we
  const pc = 'HTTP/1.1 200 OK\r\nProxy-Connection: close\r\nContent-Length: 0\r\n\r\n';
  t.match(ll(pc), { head: { keepAlive: false } });
  t.match(new ResponseHeadParser().push(Buffer.from(pc)), { kind: 'head', head: { connectionClose: true } });
});
