/**
 * What the strict HTTP/1.1 head parsers (requests in head-parser.ts, responses in
 * response-head.ts) share: cutting a byte stream into CRLF lines, the head-size limit, and the
 * field lines, which follow the same rules in both. Each parser adds its first line (request or
 * status line), the fields it reads itself, and what the complete head means.
 *
 * Lines are parsed whole, once their LF has arrived: a head split anywhere (inside a CRLF
 * too) gives the same result as the head in one piece. A line that arrives in one buffer is
 * read in place; only a line split across buffers is copied, into one reused scratch buffer.
 */

/** Refusals both parsers give, for the same bytes, from the shared line and field handling. */
export type LineRefusal =
  /** the head (first line through the empty line) is over `maxHeadBytes` */
  | 'head-too-large'
  /** more field lines than `maxHeaders` */
  | 'too-many-headers'
  /** a LF not preceded by CR */
  | 'bare-lf'
  /** a CR not followed by LF */
  | 'bare-cr'
  /** a NUL byte */
  | 'nul'
  /** empty, a non-token byte, or whitespace before the colon */
  | 'bad-header-name'
  /** a control character (other than HTAB) in a value */
  | 'bad-header-value'
  /** a field line starting with SP or HTAB (line folding) */
  | 'obs-fold';

export type Refused<T extends string> = { kind: 'refused'; reason: T };
export type LineResult = { kind: 'more' } | Refused<LineRefusal>;

export const DEFAULT_MAX_HEADERS = 256;

// Byte classes.
export const TOKEN = 1; // RFC 9110 tchar
export const TARGET = 2; // visible ASCII but `#` (a request target)
export const REASON = 4; // HTAB, SP, VCHAR, obs-text (a reason phrase)
export const CLASS = new Uint8Array(256);
for (let c = 0x21; c <= 0x7e; c++) CLASS[c]! |= TARGET;
CLASS[0x23]! &= ~TARGET;
CLASS[0x09]! |= REASON;
for (let c = 0x20; c <= 0x7e; c++) CLASS[c]! |= REASON;
for (let c = 0x80; c <= 0xff; c++) CLASS[c]! |= REASON;
for (const ch of "!#$%&'*+-.^_`|~") CLASS[ch.charCodeAt(0)]! |= TOKEN;
for (let c = 0x30; c <= 0x39; c++) CLASS[c]! |= TOKEN;
for (let c = 0x41; c <= 0x5a; c++) CLASS[c]! |= TOKEN;
for (let c = 0x61; c <= 0x7a; c++) CLASS[c]! |= TOKEN;

export const CR = 13;
const LF = 10;
export const SP = 32;
export const HTAB = 9;

/** one element of a Connection list: a token, SP or HTAB before it, only SP after it */
export const CONNECTION_ELEMENT = /^[ \t]*([!#$%&'*+\-.^_`|~0-9A-Za-z]+) *$/;
/** a Content-Length value: 1–15 digits, no leading zero */
export const CONTENT_LENGTH_RE = /^(?:0|[1-9][0-9]{0,14})$/;

export const MORE: { kind: 'more' } = Object.freeze({ kind: 'more' });
const REFUSALS = new Map<string, Refused<string>>();
/** The one frozen result for `reason`. */
export function refused<T extends string>(reason: T): Refused<T> {
  let r = REFUSALS.get(reason);
  if (!r) {
    r = Object.freeze({ kind: 'refused', reason });
    REFUSALS.set(reason, r);
  }
  return r as Refused<T>;
}

/** The reason for a byte that may not appear where it is: NUL and CR have their own. */
export function badByte<T extends string>(c: number, otherwise: T): T | 'nul' | 'bare-cr' {
  return c === 0 ? 'nul' : c === CR ? 'bare-cr' : otherwise;
}

/** `name` (of the same length) is `lower` (lower-case letters and `-`) in any case. */
export function named(name: string, lower: string): boolean {
  for (let k = 0; k < lower.length; k++)
    if ((name.charCodeAt(k) | 0x20) !== lower.charCodeAt(k)) return false;
  return true;
}

type Latin1Slicer = (b: Buffer, start: number, end: number) => string;
const proto = Buffer.prototype as Buffer & { latin1Slice?: (start: number, end: number) => string };
/**
 * Bytes [start, end) of `b` as a Latin-1 string. node's own `latin1Slice` (what
 * `toString('latin1', …)` ends in) skips the encoding lookup and argument checks of the
 * public method: measurable at a few strings per field line. The public method where a node
 * lacks it.
 */
export const latin1: Latin1Slicer =
  typeof proto.latin1Slice === 'function'
    ? (b, start, end) => (b as typeof proto).latin1Slice!(start, end)
    : (b, start, end) => b.toString('latin1', start, end);

function isOws(c: number): boolean {
  return c === SP || c === HTAB;
}

/**
 * One head at a time, cut into lines: the first line goes to `firstLine` (an empty one to
 * `emptyFirstLine`), each field line is checked here and handed to `semantics`, the empty line
 * goes to `finish`. A hook returns a result to end the head, `undefined` to read on. After a
 * result other than `more` the parser is spent until `resetLines`.
 */
export abstract class HeadLines<R extends { kind: string }> {
  protected readonly maxHeadBytes: number;
  protected readonly maxHeaders: number;
  /** a line split across buffers, so far */
  private scratch: Buffer | undefined;
  private scratchLen = 0;
  /** head bytes in complete lines so far */
  protected consumed = 0;
  protected spent = false;
  private inFields = false;
  /** flat [name, value, …] in the order sent, names as sent, values trimmed of SP/HTAB (Latin-1) */
  protected headers: string[] = [];

  constructor(maxHeadBytes: number, maxHeaders: number) {
    this.maxHeadBytes = maxHeadBytes;
    this.maxHeaders = maxHeaders;
  }

  /** The first line, CRLF cut off, in b[s, e) (not empty). */
  protected abstract firstLine(b: Buffer, s: number, e: number): R | undefined;
  /** The result for an empty line where the first line should be. */
  protected abstract emptyFirstLine(): R;
  /**
   * A field line that passed the shared checks, already in `headers`. `tabAfter`: the
   * whitespace trimmed off the value's end holds a HTAB. Node's parser takes a HTAB after a
   * token as part of it (`chunked<HTAB>` is not chunked to it), so where a token decides
   * something, a HTAB after one is refused.
   */
  protected abstract semantics(name: string, value: string, tabAfter: boolean): R | undefined;
  /** The empty line ending the head has arrived; the body starts at `bodyOffset`. */
  protected abstract finish(bodyOffset: number): R;

  /** Forget the head read so far (the scratch buffer's memory is kept). */
  protected resetLines(): void {
    this.scratchLen = 0;
    this.consumed = 0;
    this.spent = false;
    this.inFields = false;
    this.headers = [];
  }

  /** Reads `chunk` from `pos` on. Offsets returned are into `chunk`. */
  protected lines(chunk: Buffer, pos: number): R | LineResult {
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
      let r: R | LineResult | undefined;
      if (!this.inFields) {
        r = e === s ? this.emptyFirstLine() : this.firstLine(buf, s, e);
        this.inFields = true;
      } else if (e === s) {
        r = this.finish(pos);
      } else {
        r = this.fieldLine(buf, s, e);
      }
      if (r) return this.done(r);
    }
  }

  private done<T>(r: T): T {
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

  /**
   * A token name right up to the colon, no line folding, a value of no control character but
   * HTAB, trimmed of SP and HTAB; at most `maxHeaders` lines.
   */
  private fieldLine(b: Buffer, s: number, e: number): R | LineResult | undefined {
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
    const line = latin1(b, s, v1);
    const name = line.slice(0, colon);
    const value = line.slice(v0 - s);
    this.headers.push(name, value);
    let tabAfter = false;
    for (let k = v1; k < e; k++) if (b[k] === HTAB) tabAfter = true;
    return this.semantics(name, value, tabAfter);
  }
}
