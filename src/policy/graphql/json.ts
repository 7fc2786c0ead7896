/**
 * A strict JSON reader for large GraphQL request bodies. `JSON.parse` over a multi-MiB body
 * first needs the whole body as a string and then copies every string in it, which for an
 * 8 MiB mutation with one huge argument is nearly all the classifier's time. This reader
 * walks the UTF-8 bytes once, validating the complete JSON grammar (RFC 8259, as V8's
 * `JSON.parse` implements it), and keeps only the byte spans of the top-level members
 * the classifier reads: `query`, `operationName` and `extensions` (the last of each, as
 * `JSON.parse` keeps the last of duplicated keys). Those few values are then decoded on their
 * own: a string without escapes is its bytes, an ASCII string with few escapes is its runs
 * copied around the decoded escapes, and anything else is `JSON.parse` of the value's span, so
 * a value means exactly what it means in the whole body. Small bodies, where `JSON.parse` is
 * faster, never come here (request.ts, JSON_READER_MIN_BYTES).
 *
 * The contract, checked by a differential fuzz against `JSON.parse`: for a body that is valid
 * UTF-8, `readJsonRequest` returns undefined exactly when `JSON.parse` throws, and otherwise
 * the same batch flag, the same items and the same three members of each.
 */
import { isAscii } from 'node:buffer';

/** The members of one top-level request object the classifier reads (undefined: absent). */
export interface JsonRequestFields {
  query: unknown;
  operationName: unknown;
  extensions: unknown;
  /**
   * two members name the same one of the three, counting spellings that differ only in case
   * (`Query`, or `ſ` that Go folds to `s`): parsers differ on which of them wins
   */
  keyClash: boolean;
}

/** A parsed body: an array (`batch`) or a single value; undefined items are not objects. */
export interface JsonRequest {
  batch: boolean;
  items: (JsonRequestFields | undefined)[];
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;

/** JSON whitespace: space, tab, LF, CR (nothing else, not the BOM, not U+00A0). */
const WS = new Uint8Array(256);
for (const c of [0x20, 0x09, 0x0a, 0x0d]) WS[c] = 1;
/** Bytes that end a run of plain string content: control characters, `"` and `\`. */
const SPECIAL = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) SPECIAL[c] = 1;
SPECIAL[QUOTE] = SPECIAL[BACKSLASH] = 1;
/** After a backslash: 1 for `" \ / b f n r t`, 2 for `u` (four hex digits follow). */
const ESCAPE = new Uint8Array(256);
for (const ch of '"\\/bfnrt') ESCAPE[ch.charCodeAt(0)] = 1;
ESCAPE[0x75] = 2;
const HEX = new Uint8Array(256);
for (const ch of '0123456789abcdefABCDEF') HEX[ch.charCodeAt(0)] = 1;

const isDigit = (c: number | undefined): boolean => c !== undefined && c >= 0x30 && c <= 0x39;

/** How many plain bytes the byte loop reads before it switches to 4-byte words. */
const WORD_AFTER = 32;

const FIELD_NAMES = ['query', 'operationName', 'extensions'] as const;
const FOLDED_NAMES: readonly string[] = FIELD_NAMES.map((n) => n.toLowerCase());
const QUOTED_NAMES: readonly string[] = FIELD_NAMES.map((n) => `"${n}"`);

/**
 * A key as case-insensitive parsers match it: Go's encoding/json (gqlgen, graph-gophers)
 * folds case and `ſ` to `s` (its other non-ASCII fold, the Kelvin sign, is in no tracked
 * key); ASP.NET's web defaults ignore case.
 */
export function foldKey(key: string): string {
  return key.toLowerCase().replace(/\u017f/g, 's');
}

/** Spans [start, end) of the last value of each member; -1 when absent. */
class Spans {
  starts = [-1, -1, -1];
  ends = [-1, -1, -1];
  /** escapes in the value, when it is a string */
  escapes = [0, 0, 0];
  /** which members were seen in any spelling (bit per member) */
  seen = 0;
  clash = false;
}

// The hot loops are free functions of their arguments: a method's on-stack-replaced code
// embeds the receiver's objects and is thrown away by every GC that collects them.

/** Out-parameter of readString: the escapes in the string it read last. */
let lastEscapes = 0;

/**
 * The body as aligned 4-byte words: words[k] holds bytes [start + 4k, start + 4k + 4).
 * Byte order does not matter: the word tests ask only whether some byte is special.
 */
interface Words {
  w: Int32Array;
  start: number;
}

function wordsOf(b: Buffer): Words {
  const start = (4 - (b.byteOffset & 3)) & 3;
  const count = (b.length - start) >> 2;
  return { w: count > 0 ? new Int32Array(b.buffer, b.byteOffset + start, count) : new Int32Array(0), start };
}

/** The first index ≥ i whose byte is special (or b.length). */
function skipPlain(b: Buffer, words: Words, i: number): number {
  const n = b.length;
  const base = words.start;
  while (i < n && ((i - base) & 3) !== 0) {
    if (SPECIAL[b[i]!] === 1) return i;
    i++;
  }
  if (i >= base) i = base + (plainWords(words.w, (i - base) >> 2) << 2);
  while (i < n && SPECIAL[b[i]!] !== 1) i++;
  return i;
}

/** i at an opening `"`: the index after the closing one, or -1 if the string is invalid. */
function readString(b: Buffer, words: Words, i: number): number {
  const n = b.length;
  let j = i + 1;
  let run = 0;
  let escapes = 0;
  for (;;) {
    if (j >= n) return -1;
    const c = b[j]!;
    if (SPECIAL[c] !== 1) {
      j++;
      if (++run === WORD_AFTER) {
        j = skipPlain(b, words, j);
        run = 0;
      }
      continue;
    }
    if (c === QUOTE) {
      lastEscapes = escapes;
      return j + 1;
    }
    if (c !== BACKSLASH) return -1; // a raw control character
    escapes++;
    const e = ESCAPE[b[j + 1] ?? 0];
    if (e === 1) j += 2;
    else if (
      e === 2 &&
      j + 5 < n &&
      HEX[b[j + 2]!] === 1 &&
      HEX[b[j + 3]!] === 1 &&
      HEX[b[j + 4]!] === 1 &&
      HEX[b[j + 5]!] === 1
    )
      j += 6;
    else return -1;
    run = 0;
  }
}

/** i at `-` or a digit: the index after the number (RFC 8259 §6), or -1. */
function readNumber(b: Buffer, i: number): number {
  let j = i;
  if (b[j] === MINUS) j++;
  if (b[j] === 0x30) j++;
  else if (isDigit(b[j])) while (isDigit(b[j])) j++;
  else return -1;
  if (b[j] === DOT) {
    j++;
    if (!isDigit(b[j])) return -1;
    while (isDigit(b[j])) j++;
  }
  if (b[j] === 0x65 || b[j] === 0x45) {
    j++;
    if (b[j] === PLUS || b[j] === MINUS) j++;
    if (!isDigit(b[j])) return -1;
    while (isDigit(b[j])) j++;
  }
  return j;
}

/** The index after `true`, `false` or `null` at i, or -1. */
function readLiteral(b: Buffer, i: number): number {
  for (const word of LITERALS) {
    if (b[i] !== word[0]) continue;
    for (let k = 1; k < word.length; k++) if (b[i + k] !== word[k]) return -1;
    return i + word.length;
  }
  return -1;
}

function skipWs(b: Buffer, i: number): number {
  while (WS[b[i] ?? 0] === 1) i++;
  return i;
}

/** Out-parameter of keyIndex: the member the key names in a case-insensitive parser, or -1. */
let lastFolded = -1;

/**
 * Which tracked member the key string at [i, end) names exactly, or -1; `lastFolded` gets the
 * member it names when case is ignored.
 */
function keyIndex(b: Buffer, i: number, end: number): number {
  const len = end - i - 2;
  // fast path: no escapes, compare the bytes
  for (let f = 0; f < FIELD_NAMES.length; f++) {
    const name = FIELD_NAMES[f]!;
    if (len !== name.length) continue;
    let k = 0;
    while (k < len && b[i + 1 + k] === name.charCodeAt(k)) k++;
    if (k === len) {
      lastFolded = f;
      return f;
    }
  }
  lastFolded = -1;
  // the longest spelling: `operationName` with every letter escaped as \uXXXX
  if (len < 5 || len > 13 * 6) return -1;
  const raw = b.subarray(i + 1, end - 1);
  let plain = raw.indexOf(BACKSLASH) === -1;
  if (plain) {
    // ASCII without escapes: only a case-insensitive match of the same length can fold
    let ascii = true;
    for (let k = 0; k < len; k++) if (raw[k]! >= 0x80) ascii = false;
    if (ascii && len !== 5 && len !== 10 && len !== 13) return -1;
    plain = ascii;
  }
  // an escaped key (`"qu\u0065ry"`) is the key it decodes to
  const key = plain ? raw.toString('latin1') : (JSON.parse(b.toString('utf8', i, end)) as string);
  lastFolded = FOLDED_NAMES.indexOf(foldKey(key));
  return (FIELD_NAMES as readonly string[]).indexOf(key);
}

/** The value at [start, end), as `JSON.parse` gives it; `escapes` counts a string's escapes. */
function decode(b: Buffer, start: number, end: number, escapes: number, bodyAscii: boolean): unknown {
  if (start < 0) return undefined;
  if (b[start] !== QUOTE) return JSON.parse(b.toString('utf8', start, end));
  const content = b.subarray(start + 1, end - 1);
  const ascii = bodyAscii || isAscii(content);
  // ASCII decodes as latin1 several times faster than as UTF-8, to the same string
  if (escapes === 0) return ascii ? content.toString('latin1') : content.toString('utf8');
  if (ascii && escapes * 64 <= content.length) {
    const s = unescapeAscii(content);
    if (s !== undefined) return s;
  }
  return JSON.parse(b.toString(ascii ? 'latin1' : 'utf8', start, end));
}

// parser states
const S_VALUE = 0;
const S_KEY = 1;
const S_AFTER = 2;

/**
 * Validate the whole body and find the spans of the tracked members; undefined when it is
 * not JSON. The grammar is walked with an explicit stack, so nesting depth costs no recursion.
 */
function readSpans(b: Buffer, words: Words, batch: boolean, spans: (Spans | undefined)[]): boolean {
  const n = b.length;
  let i = skipWs(b, 0);
  const trackDepth = batch ? 2 : 1;
  let cur: Spans | undefined;
  /** 1 = object, 0 = array */
  const stack: number[] = [];
  let field = -1;
  let fieldStart = 0;
  let state = S_VALUE;
  for (;;) {
    if (state === S_VALUE) {
      if (i >= n) return false;
      const c = b[i]!;
      if (stack.length === trackDepth - 1) {
        // a request object: the top-level value, or an element of a top-level array
        cur = c === LBRACE ? new Spans() : undefined;
        spans.push(cur);
      }
      if (c === LBRACE) {
        stack.push(1);
        i = skipWs(b, i + 1);
        if (b[i] === RBRACE) {
          i++;
          stack.pop();
          state = S_AFTER;
        } else {
          state = S_KEY;
        }
        continue;
      }
      if (c === LBRACKET) {
        stack.push(0);
        i = skipWs(b, i + 1);
        if (b[i] === RBRACKET) {
          i++;
          stack.pop();
          state = S_AFTER;
        }
        continue;
      }
      let e: number;
      if (c === QUOTE) e = readString(b, words, i);
      else if (c === MINUS || isDigit(c)) e = readNumber(b, i);
      else e = readLiteral(b, i);
      if (e < 0) return false;
      i = e;
      state = S_AFTER;
    } else if (state === S_KEY) {
      if (b[i] !== QUOTE) return false;
      const e = readString(b, words, i);
      if (e < 0) return false;
      // only keys of a request object: a nested key must not touch the member it is in
      const tracked = stack.length === trackDepth;
      if (tracked && cur !== undefined) {
        field = keyIndex(b, i, e);
        if (lastFolded !== -1) {
          const bit = 1 << lastFolded;
          if ((cur.seen & bit) !== 0) cur.clash = true;
          cur.seen |= bit;
        }
      } else if (tracked) {
        field = -1;
      }
      i = skipWs(b, e);
      if (b[i] !== COLON) return false;
      i = skipWs(b, i + 1);
      if (tracked) fieldStart = i;
      state = S_VALUE;
    } else {
      // a value ended at i
      if (field !== -1 && stack.length === trackDepth) {
        cur!.starts[field] = fieldStart;
        cur!.ends[field] = i;
        // a string value is the last string read; for other values this is unused
        cur!.escapes[field] = lastEscapes;
        field = -1;
      }
      i = skipWs(b, i);
      if (stack.length === 0) return i === n;
      const c = b[i];
      const inObject = stack[stack.length - 1] === 1;
      if (c === COMMA) {
        i = skipWs(b, i + 1);
        state = inObject ? S_KEY : S_VALUE;
      } else if (c === (inObject ? RBRACE : RBRACKET)) {
        i++;
        stack.pop();
      } else {
        return false;
      }
    }
  }
}

/**
 * Read a JSON request body that is valid UTF-8 (`ascii`: known to be all ASCII). Undefined
 * when `JSON.parse` would throw on it.
 */
export function readJsonRequest(body: Buffer, ascii = false): JsonRequest | undefined {
  const batch = body[skipWs(body, 0)] === LBRACKET;
  const spans: (Spans | undefined)[] = [];
  if (!readSpans(body, wordsOf(body), batch, spans)) return undefined;
  const items = spans.map((s) =>
    s === undefined
      ? undefined
      : {
          query: decode(body, s.starts[0]!, s.ends[0]!, s.escapes[0]!, ascii),
          operationName: decode(body, s.starts[1]!, s.ends[1]!, s.escapes[1]!, ascii),
          extensions: decode(body, s.starts[2]!, s.ends[2]!, s.escapes[2]!, ascii),
          keyClash: s.clash,
        },
  );
  return { batch, items };
}

/**
 * An index ≤ that of the first word at or after k holding a control character, a quote or a
 * backslash (the caller finishes byte by byte). A function of its arguments only, so its optimised code holds no
 * per-call object and survives a GC.
 */
function plainWords(w: Int32Array, k: number): number {
  // two words per step: ~20% faster than one on an 8 MiB string
  const last = w.length - 1;
  for (; k < last; k += 2) {
    const x = w[k]!;
    const y = w[k + 1]!;
    const xq = x ^ 0x22222222;
    const xb = x ^ 0x5c5c5c5c;
    const yq = y ^ 0x22222222;
    const yb = y ^ 0x5c5c5c5c;
    const hit =
      (((x - 0x20202020) | 0) & ~x) |
      (((xq - 0x01010101) | 0) & ~xq) |
      (((xb - 0x01010101) | 0) & ~xb) |
      (((y - 0x20202020) | 0) & ~y) |
      (((yq - 0x01010101) | 0) & ~yq) |
      (((yb - 0x01010101) | 0) & ~yb);
    if ((hit & 0x80808080) !== 0) return k;
  }
  return k;
}

/** The byte each one-character escape stands for. */
const UNESCAPE = new Uint8Array(256);
for (const [ch, v] of [
  ['"', 0x22],
  ['\\', 0x5c],
  ['/', 0x2f],
  ['b', 0x08],
  ['f', 0x0c],
  ['n', 0x0a],
  ['r', 0x0d],
  ['t', 0x09],
] as const) {
  UNESCAPE[ch.charCodeAt(0)] = v;
}

/**
 * The string a validated, ASCII string body with a few escapes stands for: plain runs are
 * copied natively, escapes written as bytes, and the result decoded as latin1. Undefined when
 * a `\uXXXX` escape is not ASCII (the caller then uses JSON.parse).
 */
function unescapeAscii(content: Buffer): string | undefined {
  const out = Buffer.allocUnsafe(content.length);
  let o = 0;
  let p = 0;
  for (;;) {
    const q = content.indexOf(BACKSLASH, p);
    if (q === -1) {
      o += content.copy(out, o, p);
      return out.toString('latin1', 0, o);
    }
    o += content.copy(out, o, p, q);
    const e = content[q + 1]!;
    if (e === 0x75) {
      const code = Number.parseInt(content.toString('latin1', q + 2, q + 6), 16);
      if (code >= 0x80) return undefined;
      out[o++] = code;
      p = q + 6;
    } else {
      out[o++] = UNESCAPE[e]!;
      p = q + 2;
    }
  }
}

const LITERALS = ['true', 'false', 'null'].map((w) => Array.from(w, (ch) => ch.charCodeAt(0)));

/**
 * A `\u` escape of a letter some parser reads in a tracked key: ASCII letters are U+0041 to
 * U+007A, and Go folds `ſ` (U+017F) to `s`. (A plain `/\\u/` stops at every backslash of a
 * document's `\n` and `\t` escapes; this pattern lets the regex engine skip ahead.)
 */
const KEY_LETTER_ESCAPE = /\\u0(?:0[4-7]|17)/;

/** How often `needle` occurs in `text`, counting at most `max + 1`. */
function occurrences(text: string, needle: string, max: number): number {
  let n = 0;
  for (let at = text.indexOf(needle); at !== -1 && n <= max; at = text.indexOf(needle, at + needle.length))
    n++;
  return n;
}

/** A key other than the three that a case-insensitive parser reads as one of them. */
function foldsToTracked(key: string): boolean {
  // folding keeps the length in UTF-16 units (`ſ` and the Kelvin sign are one unit each)
  const l = key.length;
  if (l !== 5 && l !== 10 && l !== 13) return false;
  return !(FIELD_NAMES as readonly string[]).includes(key) && FOLDED_NAMES.includes(foldKey(key));
}

/**
 * The same answer from `JSON.parse` (the reference, and the faster path for small bodies).
 * `JSON.parse` keeps only the last of duplicated keys, so it cannot see a key clash; a body
 * that might hold one is read by the byte reader instead, which sees every key: one whose text
 * spells a tracked key (`"query"`…) more often than the parse kept such members, that holds a
 * `\u` escape of a letter (which can spell a key), or whose request object has a key that
 * folds to a tracked one (`Query`, `extenſions`).
 */
export function parseJsonRequest(text: string): JsonRequest | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const batch = Array.isArray(json);
  const values: unknown[] = batch ? (json as unknown[]) : [json];
  const members = [0, 0, 0];
  let suspect = false;
  const items = values.map((it) => {
    if (typeof it !== 'object' || it === null || Array.isArray(it)) return undefined;
    const o = it as Record<string, unknown>;
    for (let f = 0; f < FIELD_NAMES.length; f++) if (Object.hasOwn(o, FIELD_NAMES[f]!)) members[f]!++;
    for (const k in o) if (foldsToTracked(k)) suspect = true;
    return {
      query: o['query'],
      operationName: o['operationName'],
      extensions: o['extensions'],
      keyClash: false,
    };
  });
  // a duplicate of a member the parse kept; nested keys of that name only cost the slower path
  for (let f = 0; f < FIELD_NAMES.length && !suspect; f++) {
    if (members[f]! > 0) suspect = occurrences(text, QUOTED_NAMES[f]!, members[f]!) !== members[f];
  }
  if (suspect || KEY_LETTER_ESCAPE.test(text)) return readJsonRequest(Buffer.from(text, 'utf8'));
  return { batch, items };
}
