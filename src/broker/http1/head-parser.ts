/**
 * A strict, incremental HTTP/1.1 request-head parser: bytes in as they arrive, out either
 * "need more", the parsed head with the offset its body starts at, or a refusal with a stable
 * reason. Where two implementations could read the same bytes differently it refuses rather
 * than picks a reading; every head node's own parser (llhttp, strict) refuses is refused too.
 * The rules and each deliberate difference from llhttp are in docs/parsing.md. Cutting the
 * stream into lines and checking field lines, shared with the response-head parser, is in
 * head-lines.ts; this file reads the request line and what the fields mean for a request.
 */
import {
  badByte,
  CLASS,
  CONNECTION_ELEMENT,
  CONTENT_LENGTH_RE,
  CR,
  DEFAULT_MAX_HEADERS,
  HeadLines,
  latin1,
  type LineRefusal,
  named,
  refused,
  SP,
  TARGET,
  TOKEN,
} from './head-lines.js';

export { DEFAULT_MAX_HEADERS };

/**
 * A request head's byte cap when the caller gives none: the broker's default `maxHeaderBytes`
 * (its DEFAULT_LIMITS, which the engine always passes), restated here because the parsers
 * import nothing of the engine.
 */
export const DEFAULT_MAX_HEAD_BYTES = 32 * 1024;

/** Why a head was refused; stable, for audit and tests. */
export type HeadRefusal =
  /** the refusals of the shared line and field-line checks (head-lines.ts) */
  | LineRefusal
  /** an empty line before the request line */
  | 'leading-empty-line'
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

const NONE: BodyFraming = Object.freeze({ kind: 'none' });
const CHUNKED: BodyFraming = Object.freeze({ kind: 'chunked' });

const HOST_RE = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::[0-9]{1,5})?$/;

/**
 * One request head at a time: `push` buffers until the head is complete or refused. After a
 * result other than `more` the parser is spent; `reset` readies it for the next head.
 */
export class HeadParser extends HeadLines<HeadResult> {
  private readonly allowHttp10: boolean;
  // the head under construction
  private method = '';
  private target = '';
  private version: '1.1' | '1.0' = '1.1';
  private host: string | undefined;
  private contentLength = -1;
  private chunked = false;
  private expectContinue = false;
  private otherExpectation = false;
  private connectionClose = false;
  private upgrade = false;

  constructor(opts: HeadParserOptions = {}) {
    super(opts.maxHeadBytes ?? DEFAULT_MAX_HEAD_BYTES, opts.maxHeaders ?? DEFAULT_MAX_HEADERS);
    this.allowHttp10 = opts.allowHttp10 ?? false;
  }

  /** The method and target of the head being read, once its request line was parsed ('' before). */
  get partial(): { method: string; target: string } {
    return { method: this.method, target: this.target };
  }

  /** Forget everything but the options (and the scratch buffer's memory). */
  reset(): void {
    this.resetLines();
    this.method = '';
    this.target = '';
    this.version = '1.1';
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
    return this.lines(chunk, 0);
  }

  protected emptyFirstLine(): HeadResult {
    return refused('leading-empty-line');
  }

  /** The request line. */
  protected firstLine(b: Buffer, s: number, e: number): HeadResult | undefined {
    let i = s;
    while (i < e && CLASS[b[i]!]! & TOKEN) i++;
    if (i === e) return refused('bad-request-line');
    if (b[i] !== SP) return refused(badByte(b[i]!, 'bad-method'));
    if (i === s) return refused('bad-request-line');
    const line = latin1(b, s, e);
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

  /** The fields the request parser reads itself; every other one is only carried. */
  protected semantics(name: string, value: string, tabAfter: boolean): HeadResult | undefined {
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
        if (!CONTENT_LENGTH_RE.test(value)) return refused('bad-content-length');
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
    // the usual one-token values, without the split (the value is trimmed already)
    if (value.length === 10 && named(value, 'keep-alive')) return undefined;
    if (value.length === 5 && named(value, 'close')) {
      this.connectionClose = true;
      return undefined;
    }
    for (const part of value.split(',')) {
      const m = CONNECTION_ELEMENT.exec(part);
      if (!m) return refused('bad-connection');
      const tok = m[1]!;
      if (tok.length === 5 && tok.toLowerCase() === 'close') this.connectionClose = true;
    }
    return undefined;
  }

  protected finish(bodyOffset: number): HeadResult {
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
