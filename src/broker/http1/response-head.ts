/**
 * A strict, incremental HTTP/1.1 response-head parser, for the broker's own upstream client:
 * bytes in as they arrive, out either "need more", the parsed head with the offset its body
 * starts at, or a refusal with a stable reason. On a pooled upstream connection a framing
 * disagreement would hand the rest of one response to the next request, so where two
 * implementations could read the same bytes differently it refuses rather than picks a
 * reading; every head node's own parser (llhttp, strict) refuses is refused too. The rules
 * and each deliberate difference from llhttp are in docs/parsing.md ("Response heads").
 * Cutting the stream into lines and checking field lines, shared with the request-head
 * parser, is in head-lines.ts; this file reads the status line and what the fields mean for
 * a response.
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
  REASON,
  refused,
  SP,
} from './head-lines.js';

/** Why a response head was refused; stable, for audit and tests. */
export type ResponseRefusal =
  /** the refusals of the shared line and field-line checks (head-lines.ts) */
  | LineRefusal
  /** not `HTTP/1.x SP 3DIGIT [SP reason]`, or an empty line before it */
  | 'bad-status-line'
  /** a version other than `HTTP/1.1` or `HTTP/1.0` */
  | 'bad-version'
  /** a status code outside 100–599, or an unassigned informational one (104–199) */
  | 'bad-status'
  /** a control character (other than HTAB) in the reason phrase */
  | 'bad-reason'
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

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

const OWS_RE = /^[ \t]+|[ \t]+$/g;
/** a Keep-Alive `timeout` parameter: digits only, at most 9 of them (a hint, never trusted further) */
const KEEP_ALIVE_TIMEOUT_RE = /^timeout[ \t]*=[ \t]*([0-9]{1,9})$/i;

/**
 * One response head at a time: `push` buffers until the head is complete or refused. After a
 * result other than `more` the parser is spent; `reset` readies it for the next head (after a
 * 1xx interim head, or for the next response on a kept-alive connection).
 */
export class ResponseHeadParser extends HeadLines<ResponseHeadResult> {
  // the head under construction
  private version: '1.1' | '1.0' = '1.1';
  private status = 0;
  private reason = '';
  private contentLength = -1;
  private chunked = false;
  private close = false;
  private keepAlive = false;
  private keepAliveTimeoutMs: number | undefined;

  constructor(opts: ResponseHeadParserOptions = {}) {
    super(opts.maxHeadBytes ?? DEFAULT_MAX_RESPONSE_HEAD_BYTES, opts.maxHeaders ?? DEFAULT_MAX_HEADERS);
  }

  /** Forget everything but the options (and the scratch buffer's memory). */
  reset(): void {
    this.resetLines();
    this.version = '1.1';
    this.status = 0;
    this.reason = '';
    this.contentLength = -1;
    this.chunked = false;
    this.close = false;
    this.keepAlive = false;
    this.keepAliveTimeoutMs = undefined;
  }

  /** Feed the next bytes of the stream: `chunk` from `start` on. Offsets returned are into `chunk`. */
  push(chunk: Buffer, start = 0): ResponseHeadResult {
    if (this.spent) throw new Error('ResponseHeadParser: push after a result; reset() first');
    return this.lines(chunk, start);
  }

  protected emptyFirstLine(): ResponseHeadResult {
    return refused('bad-status-line');
  }

  /** `HTTP/1.1` or `HTTP/1.0`, SP, three digits, then the end or SP and a reason phrase. */
  protected firstLine(b: Buffer, s: number, e: number): ResponseHeadResult | undefined {
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
    this.reason = e - s > 13 ? latin1(b, s + 13, e) : '';
    return undefined;
  }

  /** The fields the response parser reads itself; every other one is only carried. */
  protected semantics(name: string, value: string, tabAfter: boolean): ResponseHeadResult | undefined {
    switch (name.length) {
      case 10:
        if (named(name, 'connection')) return this.connection(value, tabAfter);
        if (named(name, 'keep-alive')) this.keepAliveHint(value);
        return undefined;
      case 14:
        if (!named(name, 'content-length')) return undefined;
        if (this.contentLength !== -1) return refused('duplicate-content-length');
        if (!CONTENT_LENGTH_RE.test(value)) return refused('bad-content-length');
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
    // the usual one-token values, without the split (the value is trimmed already)
    if (value.length === 10 && named(value, 'keep-alive')) {
      this.keepAlive = true;
      return undefined;
    }
    if (value.length === 5 && named(value, 'close')) {
      this.close = true;
      return undefined;
    }
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
    // one element (the value is trimmed already), or a list of them
    if (!value.includes(',')) this.keepAliveElement(value);
    else for (const part of value.split(',')) this.keepAliveElement(part.replace(OWS_RE, ''));
  }

  private keepAliveElement(part: string): void {
    const m = KEEP_ALIVE_TIMEOUT_RE.exec(part);
    if (!m) return;
    const ms = Number(m[1]) * 1000;
    if (this.keepAliveTimeoutMs === undefined || ms < this.keepAliveTimeoutMs) this.keepAliveTimeoutMs = ms;
  }

  protected finish(bodyOffset: number): ResponseHeadResult {
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
