/**
 * A strict, incremental HTTP/1.1 request-head parser: bytes in as they arrive, out either
 * "need more", the parsed head with the offset its body starts at, or a refusal with a stable
 * reason. Where two implementations could read the same bytes differently it refuses rather
 * than picks a reading; every head node's own parser (llhttp, strict) refuses is refused too.
 * The rules and each deliberate difference from llhttp are in docs/parsing.md.
 *
 * Lines are parsed whole, once their LF has arrived: a head split anywhere (inside a CRLF
 * too) gives the same result as the head in one piece. A line that arrives in one buffer is
 * read in place; only a line split across buffers is copied, into one reused scratch buffer.
 */
import { DEFAULT_LIMITS } from './types.js';

/** Why a head was refused; stable, for audit and tests. */
export type HeadRefusal =
  /** the head (request line through the empty line) is over `maxHeadBytes` */
  | 'head-too-large'
  /** more field lines than `maxHeaders` */
  | 'too-many-headers'
  /** an empty line before the request line */
  | 'leading-empty-line'
  /** a LF not preceded by CR */
  | 'bare-lf'
  /** a CR not followed by LF */
  | 'bare-cr'
  /** a NUL byte */
  | 'nul'
  /** not `method SP target SP version`, exactly one space each */
  | 'bad-request-line'
  /** not a token, or a method not on the list (lower case included) */
  | 'bad-method'
  /** CONNECT: a tunnel inside a tunnel */
  | 'connect-method'
  /** not origin-form, or a byte outside visible ASCII, or a `#` */
  | 'bad-target'
  /** not exactly `HTTP/1.1` (or `HTTP/1.0` where allowed) */
  | 'bad-version'
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
  /** Transfer-Encoding other than exactly `chunked` */
  | 'te-not-chunked'
  /** both Content-Length and Transfer-Encoding */
  | 'te-and-content-length'
  /** Transfer-Encoding on an HTTP/1.0 request */
  | 'http10-te'
  /** no Host */
  | 'missing-host'
  /** Host more than once */
  | 'duplicate-host'
  /** Host not `name[:port]` or `[v6][:port]` */
  | 'bad-host'
  /** Connection not a comma-separated list of tokens */
  | 'bad-connection';

/** How the body that follows the head is framed. */
export type BodyFraming = { kind: 'none' } | { kind: 'length'; bytes: number } | { kind: 'chunked' };

export interface ParsedHead {
  /** a method from {@link METHODS} */
  method: string;
  /** origin-form: `/` then visible ASCII, no `#` */
  target: string;
  version: '1.1' | '1.0';
  /** flat [name, value, …] in the order sent, names as sent, values trimmed of SP/HTAB (Latin-1) */
  headers: string[];
  /** the Host value as sent */
  host: string;
  framing: BodyFraming;
  /** an Expect header with the value 100-continue (any case) */
  expectContinue: boolean;
  /** an Expect header with any other value */
  otherExpectation: boolean;
  /** a `close` in Connection, or HTTP/1.0 (never kept alive) */
  connectionClose: boolean;
  /** an Upgrade header is present (whatever Connection says) */
  upgrade: boolean;
  /** bytes of the head, request line through the empty line */
  headBytes: number;
}

export type HeadResult =
  | { kind: 'more' }
  /** `bodyOffset`: where, in the buffer last pushed, the bytes after the head start */
  | { kind: 'head'; head: ParsedHead; bodyOffset: number }
  | { kind: 'refused'; reason: HeadRefusal };

export interface HeadParserOptions {
  /** bytes from the request line's first through the empty line's last (the broker's `maxHeaderBytes`) */
  maxHeadBytes?: number;
  /** field lines (256) */
  maxHeaders?: number;
  /** accept HTTP/1.0 (without Transfer-Encoding, always closed after); refused by default */
  allowHttp10?: boolean;
}

export const DEFAULT_MAX_HEADERS = 256;

/**
 * The methods accepted: those node's parser knows, less CONNECT (refused on its own reason).
 * Case-sensitive, as in node's parser: `get` is refused.
 */
export const METHODS: ReadonlySet<string> = new Set([
  'ACL',
  'BIND',
  'CHECKOUT',
  'COPY',
  'DELETE',
  'GET',
  'HEAD',
  'LINK',
  'LOCK',
  'M-SEARCH',
  'MERGE',
  'MKACTIVITY',
  'MKCALENDAR',
  'MKCOL',
  'MOVE',
  'NOTIFY',
  'OPTIONS',
  'PATCH',
  'POST',
  'PROPFIND',
  'PROPPATCH',
  'PURGE',
  'PUT',
  'QUERY',
  'REBIND',
  'REPORT',
  'SEARCH',
  'SOURCE',
  'SUBSCRIBE',
  'TRACE',
  'UNBIND',
  'UNLINK',
  'UNLOCK',
  'UNSUBSCRIBE',
]);

// Byte classes.
const TOKEN = 1; // RFC 9110 tchar
const TARGET = 2; // visible ASCII but `#`
const CLASS = new Uint8Array(256);
for (let c = 0x21; c <= 0x7e; c++) CLASS[c]! |= TARGET;
CLASS[0x23]! &= ~TARGET;
for (const ch of "!#$%&'*+-.^_`|~") CLASS[ch.charCodeAt(0)]! |= TOKEN;
for (let c = 0x30; c <= 0x39; c++) CLASS[c]! |= TOKEN;
for (let c = 0x41; c <= 0x5a; c++) CLASS[c]! |= TOKEN;
for (let c = 0x61; c <= 0x7a; c++) CLASS[c]! |= TOKEN;

const CR = 13;
const LF = 10;
const SP = 32;
const HTAB = 9;

const NONE: BodyFraming = Object.freeze({ kind: 'none' });
const CHUNKED: BodyFraming = Object.freeze({ kind: 'chunked' });
const MORE: HeadResult = Object.freeze({ kind: 'more' });
const REFUSALS = new Map<HeadRefusal, HeadResult>();
function refused(reason: HeadRefusal): HeadResult {
  let r = REFUSALS.get(reason);
  if (!r) {
    r = Object.freeze({ kind: 'refused', reason });
    REFUSALS.set(reason, r);
  }
  return r;
}

/** The reason for a byte that may not appear where it is: NUL and CR have their own. */
function badByte(c: number, otherwise: HeadRefusal): HeadRefusal {
  return c === 0 ? 'nul' : c === CR ? 'bare-cr' : otherwise;
}

/** `name` (a token of the same length) is `lower` (lower-case letters and `-`) in any case. */
function named(name: string, lower: string): boolean {
  for (let k = 0; k < lower.length; k++)
    if ((name.charCodeAt(k) | 0x20) !== lower.charCodeAt(k)) return false;
  return true;
}

function isOws(c: number): boolean {
  return c === SP || c === HTAB;
}

/** one element of a Connection list: a token, SP or HTAB before it, only SP after it */
const CONNECTION_ELEMENT = /^[ \t]*([!#$%&'*+\-.^_`|~0-9A-Za-z]+) *$/;

const HOST_RE = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::[0-9]{1,5})?$/;

/**
 * One request head at a time: `push` buffers until the head is complete or refused. After a
 * result other than `more` the parser is spent; `reset` readies it for the next head.
 */
export class HeadParser {
  private readonly maxHeadBytes: number;
  private readonly maxHeaders: number;
  private readonly allowHttp10: boolean;
  /** a line split across buffers, so far */
  private scratch: Buffer | undefined;
  private scratchLen = 0;
  /** head bytes in complete lines so far */
  private consumed = 0;
  private spent = false;
  private inFields = false;
  // the head under construction
  private method = '';
  private target = '';
  private version: '1.1' | '1.0' = '1.1';
  private headers: string[] = [];
  private host: string | undefined;
  private contentLength = -1;
  private chunked = false;
  private expectContinue = false;
  private otherExpectation = false;
  private connectionClose = false;
  private upgrade = false;

  constructor(opts: HeadParserOptions = {}) {
    this.maxHeadBytes = opts.maxHeadBytes ?? DEFAULT_LIMITS.maxHeaderBytes;
    this.maxHeaders = opts.maxHeaders ?? DEFAULT_MAX_HEADERS;
    this.allowHttp10 = opts.allowHttp10 ?? false;
  }

  /** The method and target of the head being read, once its request line was parsed ('' before). */
  get partial(): { method: string; target: string } {
    return { method: this.method, target: this.target };
  }

  /** Forget everything but the options (and the scratch buffer's memory). */
  reset(): void {
    this.scratchLen = 0;
    this.consumed = 0;
    this.spent = false;
    this.inFields = false;
    this.method = '';
    this.target = '';
    this.version = '1.1';
    this.headers = [];
    this.host = undefined;
    this.contentLength = -1;
    this.chunked = false;
    this.expectContinue = false;
    this.otherExpectation = false;
    this.connectionClose = false;
    this.upgrade = false;
  }

  /** Feed the next bytes of the stream. */
  push(chunk: Buffer): HeadResult {
    if (this.spent) throw new Error('HeadParser: push after a result; reset() first');
    let pos = 0;
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
      let r: HeadResult | undefined;
      if (!this.inFields) {
        r = e === s ? refused('leading-empty-line') : this.requestLine(buf, s, e);
        this.inFields = true;
      } else if (e === s) {
        r = this.finish(pos);
      } else {
        r = this.fieldLine(buf, s, e);
      }
      if (r) return this.done(r);
    }
  }

  private done(r: HeadResult): HeadResult {
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

  private requestLine(b: Buffer, s: number, e: number): HeadResult | undefined {
    let i = s;
    while (i < e && CLASS[b[i]!]! & TOKEN) i++;
    if (i === e) return refused('bad-request-line');
    if (b[i] !== SP) return refused(badByte(b[i]!, 'bad-method'));
    if (i === s) return refused('bad-request-line');
    const line = b.toString('latin1', s, e);
    const method = line.slice(0, i - s);
    if (method === 'CONNECT') {
      // kept for the refusal's audit event: the authority it asked for
      this.method = method;
      const end = line.indexOf(' ', i - s + 1);
      this.target = line.slice(i - s + 1, end === -1 ? line.length : end);
      return refused('connect-method');
    }
    if (!METHODS.has(method)) return refused('bad-method');
    const t0 = ++i;
    while (i < e && CLASS[b[i]!]! & TARGET) i++;
    if (i === t0) return refused(i < e && b[i] !== SP ? badByte(b[i]!, 'bad-target') : 'bad-request-line');
    if (i < e && b[i] !== SP) return refused(badByte(b[i]!, 'bad-target'));
    if (b[t0] !== 0x2f) return refused('bad-target');
    if (i === e) return refused('bad-request-line');
    const target = line.slice(t0 - s, i - s);
    i++;
    // exactly HTTP/1.1 (or HTTP/1.0), nothing after it
    for (let k = i; k < e; k++) if (b[k] === 0 || b[k] === CR) return refused(badByte(b[k]!, 'bad-version'));
    if (
      e - i !== 8 ||
      b[i] !== 0x48 ||
      b[i + 1] !== 0x54 ||
      b[i + 2] !== 0x54 ||
      b[i + 3] !== 0x50 ||
      b[i + 4] !== 0x2f ||
      b[i + 5] !== 0x31 ||
      b[i + 6] !== 0x2e
    ) {
      return refused('bad-version');
    }
    const minor = b[i + 7];
    if (minor === 0x31) this.version = '1.1';
    else if (minor === 0x30 && this.allowHttp10) {
      this.version = '1.0';
      this.connectionClose = true;
    } else return refused('bad-version');
    this.method = method;
    this.target = target;
    return undefined;
  }

  private fieldLine(b: Buffer, s: number, e: number): HeadResult | undefined {
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
  private semantics(name: string, value: string, tabAfter: boolean): HeadResult | undefined {
    switch (name.length) {
      case 4:
        if (!named(name, 'host')) return undefined;
        if (this.host !== undefined) return refused('duplicate-host');
        if (!HOST_RE.test(value)) return refused('bad-host');
        this.host = value;
        return undefined;
      case 6:
        if (!named(name, 'expect')) return undefined;
        if (value.toLowerCase() === '100-continue') this.expectContinue = true;
        else this.otherExpectation = true;
        return undefined;
      case 7:
        if (named(name, 'upgrade')) this.upgrade = true;
        return undefined;
      case 10:
        if (!named(name, 'connection')) return undefined;
        return this.connection(value, tabAfter);
      case 14:
        if (!named(name, 'content-length')) return undefined;
        if (this.contentLength !== -1) return refused('duplicate-content-length');
        if (!/^(?:0|[1-9][0-9]{0,14})$/.test(value)) return refused('bad-content-length');
        if (tabAfter) return refused('bad-content-length');
        this.contentLength = Number(value);
        return undefined;
      case 17:
        if (!named(name, 'transfer-encoding')) return undefined;
        if (this.chunked) return refused('duplicate-transfer-encoding');
        if (tabAfter) return refused('te-not-chunked');
        if (value !== 'chunked') return refused('te-not-chunked');
        this.chunked = true;
        return undefined;
      default:
        return undefined;
    }
  }

  /** `close` wins; every element must be a token (no empty ones), with no HTAB after it. */
  private connection(value: string, tabAfter: boolean): HeadResult | undefined {
    if (tabAfter) return refused('bad-connection');
    for (const part of value.split(',')) {
      const m = CONNECTION_ELEMENT.exec(part);
      if (!m) return refused('bad-connection');
      const tok = m[1]!;
      if (tok.length === 5 && tok.toLowerCase() === 'close') this.connectionClose = true;
    }
    return undefined;
  }

  private finish(bodyOffset: number): HeadResult {
    if (this.chunked && this.contentLength !== -1) return refused('te-and-content-length');
    if (this.chunked && this.version === '1.0') return refused('http10-te');
    if (this.host === undefined) return refused('missing-host');
    const framing: BodyFraming = this.chunked
      ? CHUNKED
      : this.contentLength > 0
        ? { kind: 'length', bytes: this.contentLength }
        : NONE;
    return {
      kind: 'head',
      bodyOffset,
      head: {
        method: this.method,
        target: this.target,
        version: this.version,
        headers: this.headers,
        host: this.host,
        framing,
        expectContinue: this.expectContinue,
        otherExpectation: this.otherExpectation,
        connectionClose: this.connectionClose,
        upgrade: this.upgrade,
        headBytes: this.consumed,
      },
    };
  }
}

/** Parses one complete head from a single buffer (tests, and callers that already hold it). */
export function parseHead(buf: Buffer, opts?: HeadParserOptions): HeadResult {
  return new HeadParser(opts).push(buf);
}
