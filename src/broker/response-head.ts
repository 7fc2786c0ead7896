/**
 * A strict, incremental HTTP/1.1 response-head parser, for the broker's own upstream client:
 * bytes in as they arrive, out either "need more", the parsed head with the offset its body
 * starts at, or a refusal with a stable reason. On a pooled upstream connection a framing
 * disagreement would hand the rest of one response to the next request, so where two
 * implementations could read the same bytes differently it refuses rather than picks a
 * reading; every head node's own parser (llhttp, strict) refuses is refused too. The rules
 * and each deliberate difference from llhttp are in docs/parsing.md ("Response heads").
 *
 * Lines are parsed whole, once their LF has arrived: a head split anywhere (inside a CRLF
 * too) gives the same result as the head in one piece. A line that arrives in one buffer is
 * read in place; only a line split across buffers is copied, into one reused scratch buffer.
 */
import { DEFAULT_MAX_HEADERS } from './head-parser.js';

/** Why a response head was refused; stable, for audit and tests. */
export type ResponseRefusal =
  /** the head (status line through the empty line) is over `maxHeadBytes` */
  | 'head-too-large'
  /** more field lines than `maxHeaders` */
  | 'too-many-headers'
  /** a LF not preceded by CR */
  | 'bare-lf'
  /** a CR not followed by LF */
  | 'bare-cr'
  /** a NUL byte */
  | 'nul'
  /** not `HTTP/1.x SP 3DIGIT [SP reason]`, or an empty line before it */
  | 'bad-status-line'
  /** a version other than `HTTP/1.1` or `HTTP/1.0` */
  | 'bad-version'
  /** a status code outside 100–599, or an unassigned informational one (104–199) */
  | 'bad-status'
  /** a control character (other than HTAB) in the reason phrase */
  | 'bad-reason'
  /** empty, a non-token byte, or whitespace before the colon */
  | 'bad-header-name'
  /** a control character (other than HTAB) in a value */
  | 'bad-header-value'
  /** a field line starting with SP or HTAB (line folding) */
  | 'obs-fold'
  /** Content-Length more than once, even with the same value */
  | 'duplicate-content-length'
  /** Content-Length not 1–15 digits, or with a leading zero */
  | 'bad-content-length'
  /** Transfer-Encoding more than once */
  | 'duplicate-transfer-encoding'
  /** Transfer-Encoding other than exactly `chunked` (in any case) */
  | 'te-not-chunked'
  /** both Content-Length and Transfer-Encoding */
  | 'te-and-content-length'
  /** Transfer-Encoding on an HTTP/1.0 response */
  | 'http10-te'
  /** Connection not a comma-separated list of tokens */
  | 'bad-connection';

export interface ResponseHead {
  version: '1.1' | '1.0';
  /** 100–103 or 200–599 */
  status: number;
  /** the reason phrase as sent ('' when absent), Latin-1 */
  reason: string;
  /** flat [name, value, …] in the order sent, names as sent, values trimmed of SP/HTAB (Latin-1) */
  headers: string[];
  /** the Content-Length, -1 when absent */
  contentLength: number;
  /** Transfer-Encoding: chunked (exactly, in any case) */
  chunked: boolean;
  /**
   * the connection may not be reused: a `close` token in Connection (or Proxy-Connection),
   * or HTTP/1.0 without a `keep-alive` token in Connection
   */
  connectionClose: boolean;
  /** the smallest `timeout=N` (N seconds, digits only) of the Keep-Alive fields, in ms; else undefined */
  keepAliveTimeoutMs: number | undefined;
  /** bytes of the head, status line through the empty line */
  headBytes: number;
}

export type ResponseHeadResult =
  | { kind: 'more' }
  /** `bodyOffset`: where, in the buffer last pushed, the bytes after the head start */
  | { kind: 'head'; head: ResponseHead; bodyOffset: number }
  | { kind: 'refused'; reason: ResponseRefusal };

export interface ResponseHeadParserOptions {
  /** bytes from the status line's first through the empty line's last (16 KiB, as node's default) */
  maxHeadBytes?: number;
  /** field lines (256) */
  maxHeaders?: number;
}

export const DEFAULT_MAX_RESPONSE_HEAD_BYTES = 16_384;

// Byte classes.
const TOKEN = 1; // RFC 9110 tchar
const REASON = 2; // HTAB, SP, VCHAR, obs-text
const CLASS = new Uint8Array(256);
CLASS[0x09]! |= REASON;
for (let c = 0x20; c <= 0x7e; c++) CLASS[c]! |= REASON;
for (let c = 0x80; c <= 0xff; c++) CLASS[c]! |= REASON;
for (const ch of "!#$%&'*+-.^_`|~") CLASS[ch.charCodeAt(0)]! |= TOKEN;
for (let c = 0x30; c <= 0x39; c++) CLASS[c]! |= TOKEN;
for (let c = 0x41; c <= 0x5a; c++) CLASS[c]! |= TOKEN;
for (let c = 0x61; c <= 0x7a; c++) CLASS[c]! |= TOKEN;

const CR = 13;
const LF = 10;
const SP = 32;
const HTAB = 9;

const MORE: ResponseHeadResult = Object.freeze({ kind: 'more' });
const REFUSALS = new Map<ResponseRefusal, ResponseHeadResult>();
function refused(reason: ResponseRefusal): ResponseHeadResult {
  let r = REFUSALS.get(reason);
  if (!r) {
    r = Object.freeze({ kind: 'refused', reason });
    REFUSALS.set(reason, r);
  }
  return r;
}

/** The reason for a byte that may not appear where it is: NUL and CR have their own. */
function badByte(c: number, otherwise: ResponseRefusal): ResponseRefusal {
  return c === 0 ? 'nul' : c === CR ? 'bare-cr' : otherwise;
}

/** `name` (of the same length) is `lower` (lower-case letters and `-`) in any case. */
function named(name: string, lower: string): boolean {
  for (let k = 0; k < lower.length; k++)
    if ((name.charCodeAt(k) | 0x20) !== lower.charCodeAt(k)) return false;
  return true;
}

function isOws(c: number): boolean {
  return c === SP || c === HTAB;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

/** one element of a Connection list: a token, SP or HTAB before it, only SP after it */
const CONNECTION_ELEMENT = /^[ \t]*([!#$%&'*+\-.^_`|~0-9A-Za-z]+) *$/;
const OWS_RE = /^[ \t]+|[ \t]+$/g;
/** a Keep-Alive `timeout` parameter: digits only, at most 9 of them (a hint, never trusted further) */
const KEEP_ALIVE_TIMEOUT_RE = /^timeout[ \t]*=[ \t]*([0-9]{1,9})$/i;

/**
 * One response head at a time: `push` buffers until the head is complete or refused. After a
 * result other than `more` the parser is spent; `reset` readies it for the next head (after a
 * 1xx interim head, or for the next response on a kept-alive connection).
 */
export class ResponseHeadParser {
  private readonly maxHeadBytes: number;
  private readonly maxHeaders: number;
  /** a line split across buffers, so far */
  private scratch: Buffer | undefined;
  private scratchLen = 0;
  /** head bytes in complete lines so far */
  private consumed = 0;
  private spent = false;
  private inFields = false;
  // the head under construction
  private version: '1.1' | '1.0' = '1.1';
  private status = 0;
  private reason = '';
  private headers: string[] = [];
  private contentLength = -1;
  private chunked = false;
  private close = false;
  private keepAlive = false;
  private keepAliveTimeoutMs: number | undefined;

  constructor(opts: ResponseHeadParserOptions = {}) {
    this.maxHeadBytes = opts.maxHeadBytes ?? DEFAULT_MAX_RESPONSE_HEAD_BYTES;
    this.maxHeaders = opts.maxHeaders ?? DEFAULT_MAX_HEADERS;
  }

  /** Forget everything but the options (and the scratch buffer's memory). */
  reset(): void {
    this.scratchLen = 0;
    this.consumed = 0;
    this.spent = false;
    this.inFields = false;
    this.version = '1.1';
    this.status = 0;
    this.reason = '';
    this.headers = [];
    this.contentLength = -1;
    this.chunked = false;
    this.close = false;
    this.keepAlive = false;
    this.keepAliveTimeoutMs = undefined;
  }

  /** Feed the next bytes of the stream: `chunk` from `start` on. Offsets returned are into `chunk`. */
  push(chunk: Buffer, start = 0): ResponseHeadResult {
    if (this.spent) throw new Error('ResponseHeadParser: push after a result; reset() first');
    let pos = start;
    for (;;) {
      const lf = chunk.indexOf(LF, pos);
      if (lf === -1) {
        const rest = chunk.length - pos;
        if (this.consumed + this.scratchLen + rest > this.maxHeadBytes)
          return this.done(refused('head-too-large'));
        this.keep(chunk, pos, chunk.length);
        return MORE;
      }
      if (this.consumed + this.scratchLen + (lf + 1 - pos) > this.maxHeadBytes) {
        return this.done(refused('head-too-large'));
      }
      let buf: Buffer;
      let s: number;
      let e: number;
      if (this.scratchLen > 0) {
        this.keep(chunk, pos, lf);
        buf = this.scratch!;
        s = 0;
        e = this.scratchLen;
        this.consumed += this.scratchLen + 1;
        this.scratchLen = 0;
      } else {
        buf = chunk;
        s = pos;
        e = lf;
        this.consumed += lf + 1 - pos;
      }
      pos = lf + 1;
      if (e === s || buf[e - 1] !== CR) return this.done(refused('bare-lf'));
      e--;
      let r: ResponseHeadResult | undefined;
      if (!this.inFields) {
        r = e === s ? refused('bad-status-line') : this.statusLine(buf, s, e);
        this.inFields = true;
      } else if (e === s) {
        r = this.finish(pos);
      } else {
        r = this.fieldLine(buf, s, e);
      }
      if (r) return this.done(r);
    }
  }

  private done(r: ResponseHeadResult): ResponseHeadResult {
    this.spent = true;
    this.scratchLen = 0;
    return r;
  }

  /** Appends chunk[from, to) to the scratch line. */
  private keep(chunk: Buffer, from: number, to: number): void {
    const n = to - from;
    if (n === 0) return;
    const need = this.scratchLen + n;
    if (!this.scratch || this.scratch.length < need) {
      const grown = Buffer.allocUnsafe(
        Math.max(need, Math.min(2 * (this.scratch?.length ?? 256), this.maxHeadBytes)),
      );
      if (this.scratch) this.scratch.copy(grown, 0, 0, this.scratchLen);
      this.scratch = grown;
    }
    chunk.copy(this.scratch, this.scratchLen, from, to);
    this.scratchLen = need;
  }

  /** `HTTP/1.1` or `HTTP/1.0`, SP, three digits, then the end or SP and a reason phrase. */
  private statusLine(b: Buffer, s: number, e: number): ResponseHeadResult | undefined {
    // NUL and CR have their own reasons wherever they are in the line
    for (let k = s; k < e; k++)
      if (b[k] === 0 || b[k] === CR) return refused(badByte(b[k]!, 'bad-status-line'));
    // `HTTP/` DIGIT `.` DIGIT SP
    if (
      e - s < 12 ||
      b[s] !== 0x48 ||
      b[s + 1] !== 0x54 ||
      b[s + 2] !== 0x54 ||
      b[s + 3] !== 0x50 ||
      b[s + 4] !== 0x2f ||
      !isDigit(b[s + 5]) ||
      b[s + 6] !== 0x2e ||
      !isDigit(b[s + 7]) ||
      b[s + 8] !== SP
    ) {
      return refused('bad-status-line');
    }
    if (!isDigit(b[s + 9]) || !isDigit(b[s + 10]) || !isDigit(b[s + 11])) return refused('bad-status-line');
    if (e - s > 12 && b[s + 12] !== SP) return refused('bad-status-line');
    if (b[s + 5] !== 0x31 || (b[s + 7] !== 0x31 && b[s + 7] !== 0x30)) return refused('bad-version');
    const status = (b[s + 9]! - 0x30) * 100 + (b[s + 10]! - 0x30) * 10 + (b[s + 11]! - 0x30);
    // an unassigned 1xx: implementations differ on whether one can carry a body
    if (status < 100 || status > 599 || (status > 103 && status < 200)) return refused('bad-status');
    for (let k = s + 13; k < e; k++) if (!(CLASS[b[k]!]! & REASON)) return refused('bad-reason');
    this.version = b[s + 7] === 0x31 ? '1.1' : '1.0';
    this.status = status;
    this.reason = e - s > 13 ? b.toString('latin1', s + 13, e) : '';
    return undefined;
  }

  private fieldLine(b: Buffer, s: number, e: number): ResponseHeadResult | undefined {
    const c0 = b[s]!;
    if (c0 === SP || c0 === HTAB) return refused('obs-fold');
    if (this.headers.length >= 2 * this.maxHeaders) return refused('too-many-headers');
    let i = s;
    while (i < e && CLASS[b[i]!]! & TOKEN) i++;
    if (i === e || b[i] !== 0x3a)
      return refused(i === e ? 'bad-header-name' : badByte(b[i]!, 'bad-header-name'));
    if (i === s) return refused('bad-header-name');
    const colon = i - s;
    i++;
    while (i < e && isOws(b[i]!)) i++;
    const v0 = i;
    let v1 = i;
    for (; i < e; i++) {
      const c = b[i]!;
      if (c > SP && c !== 0x7f) v1 = i + 1;
      else if (c !== SP && c !== HTAB) return refused(badByte(c, 'bad-header-value'));
    }
    // one string per line, cut in two
    const line = b.toString('latin1', s, v1);
    const name = line.slice(0, colon);
    const value = line.slice(v0 - s);
    this.headers.push(name, value);
    let tabAfter = false;
    for (let k = v1; k < e; k++) if (b[k] === HTAB) tabAfter = true;
    return this.semantics(name, value, tabAfter);
  }

  /**
   * The fields the parser itself reads; every other one is only carried. `tabAfter`: the
   * whitespace trimmed off the value's end holds a HTAB. Node's parser takes a HTAB after a
   * token as part of it (`chunked<HTAB>` is not chunked to it), so where a token decides
   * something, a HTAB after one is refused.
   */
  private semantics(name: string, value: string, tabAfter: boolean): ResponseHeadResult | undefined {
    switch (name.length) {
      case 10:
        if (named(name, 'connection')) return this.connection(value, tabAfter);
        if (named(name, 'keep-alive')) this.keepAliveHint(value);
        return undefined;
      case 14:
        if (!named(name, 'content-length')) return undefined;
        if (this.contentLength !== -1) return refused('duplicate-content-length');
        if (!/^(?:0|[1-9][0-9]{0,14})$/.test(value)) return refused('bad-content-length');
        if (tabAfter) return refused('bad-content-length');
        this.contentLength = Number(value);
        return undefined;
      case 16:
        // not standard, but node's parser closes on it: closing is never the unsafe reading
        if (named(name, 'proxy-connection')) {
          for (const part of value.split(','))
            if (part.replace(OWS_RE, '').toLowerCase() === 'close') this.close = true;
        }
        return undefined;
      case 17:
        if (!named(name, 'transfer-encoding')) return undefined;
        if (this.chunked) return refused('duplicate-transfer-encoding');
        if (tabAfter) return refused('te-not-chunked');
        if (value.length !== 7 || !named(value, 'chunked')) return refused('te-not-chunked');
        this.chunked = true;
        return undefined;
      default:
        return undefined;
    }
  }

  /** `close` wins; every element must be a token (no empty ones), with no HTAB after it. */
  private connection(value: string, tabAfter: boolean): ResponseHeadResult | undefined {
    if (tabAfter) return refused('bad-connection');
    for (const part of value.split(',')) {
      const m = CONNECTION_ELEMENT.exec(part);
      if (!m) return refused('bad-connection');
      const tok = m[1]!;
      if (tok.length === 5 && named(tok, 'close')) this.close = true;
      else if (tok.length === 10 && named(tok, 'keep-alive')) this.keepAlive = true;
    }
    return undefined;
  }

  /** `timeout=N` among the parameters, read leniently: anything malformed is ignored. */
  private keepAliveHint(value: string): void {
    for (const part of value.split(',')) {
      const m = KEEP_ALIVE_TIMEOUT_RE.exec(part.replace(OWS_RE, ''));
      if (!m) continue;
      const ms = Number(m[1]) * 1000;
      if (this.keepAliveTimeoutMs === undefined || ms < this.keepAliveTimeoutMs) this.keepAliveTimeoutMs = ms;
    }
  }

  private finish(bodyOffset: number): ResponseHeadResult {
    if (this.chunked && this.contentLength !== -1) return refused('te-and-content-length');
    if (this.chunked && this.version === '1.0') return refused('http10-te');
    return {
      kind: 'head',
      bodyOffset,
      head: {
        version: this.version,
        status: this.status,
        reason: this.reason,
        headers: this.headers,
        contentLength: this.contentLength,
        chunked: this.chunked,
        connectionClose: this.close || (this.version === '1.0' && !this.keepAlive),
        keepAliveTimeoutMs: this.keepAliveTimeoutMs,
        headBytes: this.consumed,
      },
    };
  }
}

/** How the body after a response head is framed, given the request's method (RFC 9112 §6.3). */
export type ResponseFraming =
  | { kind: 'none' }
  | { kind: 'length'; bytes: number }
  | { kind: 'chunked' }
  /** read to the end of the connection (it cannot be reused) */
  | { kind: 'close' };

const NONE: ResponseFraming = Object.freeze({ kind: 'none' });
const CHUNKED: ResponseFraming = Object.freeze({ kind: 'chunked' });
const CLOSE: ResponseFraming = Object.freeze({ kind: 'close' });

/**
 * The framing of the body after `head`: none for a HEAD request and for 1xx, 204 and 304
 * (whatever Content-Length or Transfer-Encoding say), else chunked, else the Content-Length,
 * else the body runs to the end of the connection. (A 101 ends HTTP on the connection: the
 * bytes after it are another protocol, so a caller that did not ask for an upgrade must close.)
 */
export function responseFraming(head: ResponseHead, method: string): ResponseFraming {
  const st = head.status;
  if (method === 'HEAD' || st < 200 || st === 204 || st === 304) return NONE;
  if (head.chunked) return CHUNKED;
  if (head.contentLength >= 0) return Object.freeze({ kind: 'length', bytes: head.contentLength });
  return CLOSE;
}
