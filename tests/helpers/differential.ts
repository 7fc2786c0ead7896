/**
 * What the differential tests of our HTTP parsers against node's own (llhttp) share: the
 * parser binding, the byte mutator, and the list of deliberate extra refusals docs/parsing.md
 * keeps for each of its "stricter than llhttp" tables; for the two head parsers also the
 * head mutator, the checks of where llhttp ends a head and how it reads the body after it,
 * and the run that compares the two parsers case by case.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';

export interface LlParser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(b: Buffer): number | (Error & { code?: string });
  /** end of input: completes a body read to the end of the connection, or returns an error */
  finish(): undefined | (Error & { code?: string });
  [k: number]: unknown;
}
interface HttpCommon {
  HTTPParser: {
    new (): LlParser;
    REQUEST: number;
    RESPONSE: number;
    kLenientNone: number;
    kOnHeaders: number;
    kOnHeadersComplete: number;
    kOnBody: number;
    kOnMessageComplete: number;
  };
  methods: string[];
}
// node's internal parser binding, as node's own http server and client drive it (no deprecation warning)
export const { HTTPParser, methods: LL_METHODS } = createRequire(import.meta.url)(
  '_http_common',
) as HttpCommon;

const DOC = resolve(dirname(fileURLToPath(import.meta.url)), '../../docs/parsing.md');

/** Reasons docs/parsing.md lists in the section titled `title`: the table's first column. */
export function documentedExtraReasons(title: string): Set<string> {
  const text = readFileSync(DOC, 'utf8');
  const section = text.split(/^#+ /m).find((s) => s.startsWith(title));
  if (!section) throw new Error(`docs/parsing.md has no "${title}" section`);
  return new Set([...section.matchAll(/^\| `([a-z0-9-]+)` \|/gm)].map((m) => m[1]!));
}

export function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

/** Bytes a mutation draws from: line ends, whitespace, separators and controls. */
export const INTERESTING = [
  '\r',
  '\n',
  ' ',
  '\t',
  '\0',
  '\x7f',
  '\x80',
  '\xff',
  ':',
  ',',
  '"',
  '\\',
  '#',
  '\x01',
  '\x0b',
];

/** `count` random insertions, deletions or replacements of bytes drawn from `alphabet`. */
export function mutateBytes(
  r: () => number,
  bytes: number[],
  count: number,
  alphabet: readonly string[],
): void {
  for (let k = 0; k < count; k++) {
    const at = Math.floor(r() * (bytes.length + 1));
    const b = pick(r, alphabet).charCodeAt(0);
    const op = Math.floor(r() * 3);
    if (op === 0) bytes.splice(at, 0, b);
    else if (op === 1) bytes.splice(at, 1);
    else bytes[Math.min(at, bytes.length - 1)] = b;
  }
}

/** Content-Length values both head generators draw from: good ones, and spellings read differently. */
export const CONTENT_LENGTHS = [
  '5',
  '0',
  ' chunked',
  '+5',
  '0x5',
  '5 5',
  '05',
  '',
  '-1',
  '5,5',
  '1e3',
  '999999999999999',
  '12345678901234567890',
  '5\t',
  '\t5 ',
];

/** What both head generators draw from. */
export interface HeadPools {
  names: readonly string[];
  values: readonly string[];
  contentLengths: readonly string[];
  transferEncodings: readonly string[];
  /** the longest field name a "long name" mutation may write, sometimes */
  longName: number;
  /** the field a "Connection" mutation writes: one of these (just Connection when absent) */
  connectionNames?: readonly string[];
}

/**
 * A head from its lines (first line, then field lines): three in four get up to two
 * structural mutations (a repeated line, folding, an empty line first, space before the
 * colon, a long name, a framing or Connection field, a line without a colon), now and then
 * bare LF line ends, and some up to three byte mutations.
 */
export function mutatedHead(r: () => number, lines: string[], pools: HeadPools): Buffer {
  const clean = r() < 0.25;
  const structural = clean ? 0 : Math.floor(r() * 3);
  for (let k = 0; k < structural; k++) {
    const at = 1 + Math.floor(r() * lines.length);
    switch (Math.floor(r() * 9)) {
      case 0:
        if (lines.length > 1) lines.splice(at, 0, lines[1 + Math.floor(r() * (lines.length - 1))]!); // duplicate
        break;
      case 1:
        lines.splice(at, 0, ` folded ${pick(r, pools.values)}`); // obs-fold
        break;
      case 2:
        lines.unshift(''); // leading empty line
        break;
      case 3:
        lines.splice(at, 0, `${pick(r, pools.names)} : x`); // space before colon
        break;
      case 4: {
        const n = 1 + Math.floor(r() * (r() < 0.1 ? pools.longName : 300));
        lines.splice(at, 0, `X-${'n'.repeat(n)}: v`); // long name
        break;
      }
      case 5:
        lines.splice(at, 0, `Content-Length: ${pick(r, pools.contentLengths)}`);
        break;
      case 6:
        lines.splice(at, 0, `Transfer-Encoding: ${pick(r, pools.transferEncodings)}`);
        break;
      case 7: {
        const field = pools.connectionNames ? pick(r, pools.connectionNames) : 'Connection';
        lines.splice(at, 0, `${field}: ${pick(r, pools.values)}`);
        break;
      }
      case 8:
        lines.splice(at, 0, 'no-colon-here');
        break;
    }
  }
  let text = lines.map((l) => `${l}\r\n`).join('') + '\r\n';
  if (!clean && r() < 0.08) text = text.replace(/\r\n/g, (m) => (r() < 0.3 ? '\n' : m)); // bare LF endings
  const bytes = [...Buffer.from(text, 'latin1')];
  const mutations = clean || r() < 0.6 ? 0 : 1 + Math.floor(r() * 3);
  mutateBytes(r, bytes, mutations, INTERESTING);
  return Buffer.from(bytes);
}

/** An llhttp run's state as the differential tests record it. */
export interface LlRun {
  error?: string;
  head?: object;
  complete: boolean;
  body: number;
}

/** `p`, counting the body bytes it reads into `view.body`, and the message's end into `view.complete`. */
export function llTracksBody(p: LlParser, view: LlRun): LlParser {
  p[HTTPParser.kOnBody] = (b: Buffer) => {
    view.body += b.length;
  };
  p[HTTPParser.kOnMessageComplete] = () => {
    view.complete = true;
  };
  return p;
}

/** `view.head`, read through a call (where TypeScript narrowed it before an llExec filled it in). */
export function headOf<V extends LlRun>(view: V): V['head'] {
  return view.head;
}

/** Feeds `b` to llhttp unless it already refused; a refusal is kept in `view.error`. */
export function llExec(p: LlParser, view: LlRun, b: Buffer): void {
  if (view.error || b.length === 0) return;
  const r = p.execute(b);
  if (typeof r !== 'number') view.error = r.code ?? 'error';
}

/** Why llhttp does not end the head exactly at `end` of `stream` (undefined: it does). */
export function llHeadEndsAt(p: LlParser, view: LlRun, stream: Buffer, end: number): string | undefined {
  llExec(p, view, stream.subarray(0, end - 1));
  if (view.error) return `llhttp refused (${view.error})`;
  if (view.head) return 'llhttp ended the head earlier';
  llExec(p, view, stream.subarray(end - 1, end));
  if (view.error) return `llhttp refused (${view.error})`;
  return undefined;
}

/** Why llhttp, after the head, does not read a body of exactly `bytes` (fed at most 64 KiB of it). */
export function llReadsLength(p: LlParser, view: LlRun, bytes: number): string | undefined {
  const feed = Math.min(bytes, 65_536);
  llExec(p, view, Buffer.alloc(feed, 0x78));
  if (view.complete && view.body !== bytes) return `length ${bytes} vs ${view.body}`;
  if (view.error) return `llhttp refused the body (${view.error})`;
  if (bytes <= feed && (!view.complete || view.body !== bytes)) return `length ${bytes} vs ${view.body}`;
  if (bytes > feed && view.complete) return 'llhttp ended a long body early';
  return undefined;
}

/** Why llhttp, after the head, does not read a small chunked body as one. */
export function llReadsChunked(p: LlParser, view: LlRun): string | undefined {
  llExec(p, view, Buffer.from('3\r\nabc\r\n0\r\n\r\n'));
  if (view.error) return `llhttp refused a chunked body (${view.error})`;
  return view.complete && view.body === 3 ? undefined : 'llhttp did not read it as chunked';
}

type Pushed = { kind: 'more' } | { kind: 'head'; bodyOffset: number } | { kind: 'refused'; reason: string };

/** Ours on the bytes; a head left incomplete is closed with CRLF CRLF (the stream goes on). */
export function oursClosed<R extends Pushed>(
  parser: { push(b: Buffer): R },
  input: Buffer,
): { result: R; stream: Buffer } {
  let result = parser.push(input);
  let stream = input;
  if (result.kind === 'more') {
    const tail = Buffer.from('\r\n\r\n');
    result = parser.push(tail);
    stream = Buffer.concat([input, tail]);
    // the offset is into the buffer last pushed: make it one into the stream
    if (result.kind === 'head') result = { ...result, bodyOffset: input.length + result.bodyOffset };
  }
  return { result, stream };
}

/** What a differential run over generated heads found. */
export interface HeadTally {
  failures: string[];
  /** llhttp accepts, ours refuses: by reason, with a first example */
  extra: Map<string, { n: number; example: string }>;
  /** both refuse: ours by reason */
  agreed: Map<string, number>;
  bothRefuse: number;
  bothAccept: number;
  extraCount: number;
  ms: number;
}

/**
 * `cases` heads: each one ours accepts must pass `compare` (llhttp agrees), each one ours
 * refuses that llhttp accepts must be refused for a `documented` reason.
 */
export function runHeadDifferential<R extends Pushed>(o: {
  cases: number;
  documented: Set<string>;
  /** case `i`: its input, our result, and the stream it was read from */
  next: (i: number) => { input: Buffer; result: R; stream: Buffer };
  /** why llhttp disagrees with our accepted head (undefined: it agrees) */
  compare: (stream: Buffer, result: Extract<R, { kind: 'head' }>) => string | undefined;
  /** llhttp reads a head from the stream */
  llAccepts: (stream: Buffer) => boolean;
}): HeadTally {
  const tally: HeadTally = {
    failures: [],
    extra: new Map(),
    agreed: new Map(),
    bothRefuse: 0,
    bothAccept: 0,
    extraCount: 0,
    ms: 0,
  };
  const t0 = performance.now();
  for (let i = 0; i < o.cases; i++) {
    const { input, result, stream } = o.next(i);
    const show = JSON.stringify(input.toString('latin1').slice(0, 160));
    if (result.kind === 'head') {
      const why = o.compare(stream, result as Extract<R, { kind: 'head' }>);
      if (why) tally.failures.push(`#${i} ours accepted, ${why}: ${show}`);
      else tally.bothAccept++;
      continue;
    }
    if (result.kind !== 'refused') {
      tally.failures.push(`#${i} ours still wants more after CRLF CRLF: ${show}`);
      continue;
    }
    if (o.llAccepts(stream)) {
      tally.extraCount++;
      const e = tally.extra.get(result.reason) ?? { n: 0, example: show };
      e.n++;
      tally.extra.set(result.reason, e);
      if (!o.documented.has(result.reason))
        tally.failures.push(`#${i} undocumented extra refusal ${result.reason}: ${show}`);
    } else {
      tally.bothRefuse++;
      tally.agreed.set(result.reason, (tally.agreed.get(result.reason) ?? 0) + 1);
    }
  }
  tally.ms = Math.round(performance.now() - t0);
  return tally;
}

/** `k n, k n, …`, most first. */
export function byCount(m: Map<string, number>): string {
  return [...m]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
}

/** The tally's lines (extra refusals grouped by reason, first 20 failures) and its checks. */
export function reportHeadTally(t: Test, tally: HeadTally, head: string[], cases: number): void {
  const lines = [...tally.extra]
    .sort((a, b) => b[1].n - a[1].n)
    .map(([k, v]) => `  ${k}: ${v.n}  e.g. ${v.example}`);
  for (const h of head) t.comment(h);
  t.comment(
    `llhttp accepts and ours refuses ${tally.extraCount} (deliberate, by reason):\n${lines.join('\n')}`,
  );
  for (const f of tally.failures.slice(0, 20)) t.comment(f);
  t.equal(tally.failures.length, 0, 'no disagreement (the first 20 are printed above)');
  t.ok(tally.bothAccept > cases / 20, 'the generator reaches accepted heads');
  t.ok(tally.bothRefuse > cases / 20, 'and refused ones');
}
