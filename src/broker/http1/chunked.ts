/**
 * A strict, incremental decoder for a chunked request body (RFC 9112 §7.1), the companion of
 * head-parser.ts. Data is handed out as ranges of the buffers pushed (no copy). It refuses
 * what parsers are known to read differently: chunk extensions, whitespace around the size,
 * a bare LF or CR, a size of more than 13 hex digits, and trailer fields.
 * docs/parsing.md states the rules.
 */

/** Why a chunked body was refused; stable, for audit and tests. */
export type ChunkedRefusal =
  /** the size line is not 1–13 hex digits followed by CRLF */
  | 'bad-chunk-size'
  /** a `;` after the size */
  | 'chunk-extension'
  /** the chunk's data is not followed by CRLF */
  | 'bad-chunk-end'
  /** a field line after the last chunk */
  | 'trailer'
  /** the last chunk is not followed by CRLF */
  | 'bad-last-chunk'
  /** the decoded body is over `maxBodyBytes` */
  | 'body-too-large';

export type ChunkedResult =
  | { kind: 'more' }
  /** `end`: where, in the buffer last pushed, the bytes after the body start */
  | { kind: 'done'; end: number; bodyBytes: number }
  | { kind: 'refused'; reason: ChunkedRefusal };

export interface ChunkedDecoderOptions {
  /** decoded body bytes allowed (unbounded by default) */
  maxBodyBytes?: number;
  /** called with each run of body data, a range of a pushed buffer; must not keep `buf` past the call unless it copies */
  onData?: (buf: Buffer, start: number, end: number) => void;
}

/** Hex digits of a chunk size: 13 fit a safe integer with room. */
export const MAX_CHUNK_SIZE_DIGITS = 13;

// States.
const S = {
  /** hex digits */
  Size: 0,
  /** after the size's CR */
  SizeCr: 1,
  /** `left` data bytes to go */
  Data: 2,
  /** the CR after data */
  DataCr: 3,
  DataLf: 4,
  /** after `0` CRLF: the CR of the empty line (no trailers) */
  LastCr: 5,
  LastLf: 6,
  Done: 7,
} as const;

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

const MORE: ChunkedResult = Object.freeze({ kind: 'more' });

export class ChunkedDecoder {
  private state: number = S.Size;
  private digits = 0;
  private size = 0;
  private left = 0;
  private total = 0;
  private readonly max: number;
  private readonly onData: ((buf: Buffer, start: number, end: number) => void) | undefined;

  constructor(opts: ChunkedDecoderOptions = {}) {
    this.max = opts.maxBodyBytes ?? Number.MAX_SAFE_INTEGER;
    this.onData = opts.onData;
  }

  /** Decoded bytes so far. */
  get bodyBytes(): number {
    return this.total;
  }

  /** Feed the next bytes, from `start` on. */
  push(buf: Buffer, start = 0): ChunkedResult {
    if (this.state === S.Done) throw new Error('ChunkedDecoder: push after the last chunk');
    let i = start;
    const n = buf.length;
    while (i < n) {
      const c = buf[i]!;
      switch (this.state) {
        case S.Size: {
          const h = hexValue(c);
          if (h >= 0) {
            if (++this.digits > MAX_CHUNK_SIZE_DIGITS) return this.refuse('bad-chunk-size');
            this.size = this.size * 16 + h;
            i++;
            break;
          }
          if (c === 0x3b && this.digits > 0) return this.refuse('chunk-extension');
          if (c !== 0x0d || this.digits === 0) return this.refuse('bad-chunk-size');
          this.state = S.SizeCr;
          i++;
          break;
        }
        case S.SizeCr:
          if (c !== 0x0a) return this.refuse('bad-chunk-size');
          i++;
          if (this.size === 0) {
            this.state = S.LastCr;
          } else {
            if (this.total + this.size > this.max) return this.refuse('body-too-large');
            this.total += this.size;
            this.left = this.size;
            this.state = S.Data;
          }
          break;
        case S.Data: {
          const take = Math.min(this.left, n - i);
          this.onData?.(buf, i, i + take);
          i += take;
          this.left -= take;
          if (this.left === 0) this.state = S.DataCr;
          break;
        }
        case S.DataCr:
          if (c !== 0x0d) return this.refuse('bad-chunk-end');
          this.state = S.DataLf;
          i++;
          break;
        case S.DataLf:
          if (c !== 0x0a) return this.refuse('bad-chunk-end');
          this.state = S.Size;
          this.digits = 0;
          this.size = 0;
          i++;
          break;
        case S.LastCr:
          if (c !== 0x0d) return this.refuse(c === 0x0a ? 'bad-last-chunk' : 'trailer');
          this.state = S.LastLf;
          i++;
          break;
        case S.LastLf:
          if (c !== 0x0a) return this.refuse('bad-last-chunk');
          this.state = S.Done;
          return { kind: 'done', end: i + 1, bodyBytes: this.total };
      }
    }
    return MORE;
  }

  private refuse(reason: ChunkedRefusal): ChunkedResult {
    this.state = S.Done;
    return { kind: 'refused', reason };
  }
}
