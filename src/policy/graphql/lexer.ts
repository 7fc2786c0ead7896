/**
 * A bounded GraphQL lexer for the classifier. Unlike graphql-js's `Lexer` it allocates no
 * token objects (graphql-js links every token to the previous one, so a 1 MiB document of
 * small tokens keeps ~500k objects alive) and skips strings, block strings and comments with
 * native `indexOf`/regex search, which is what keeps an 8 MiB string argument in milliseconds.
 *
 * It must cut tokens exactly where the GraphQL spec (Oct 2021, graphql-js 16) does: string,
 * block-string and comment boundaries decide what the classifier sees. Where it is looser
 * than the spec (raw line breaks inside a string, some number shapes) the server rejects the
 * document, so nothing runs; being looser never changes where a string or comment ends.
 */

export const EOF = -1;
export const NAME = -2;
/** a number, string or block string: only skipped, never read */
export const VALUE = -3;
export const SPREAD = -4;
export const ERR = -5;
// Punctuators are returned as their char code.
export const LBRACE = 123;
export const RBRACE = 125;
export const LPAREN = 40;
export const RPAREN = 41;
export const LBRACKET = 91;
export const RBRACKET = 93;
export const COLON = 58;
export const AT = 64;

const LINE_END = /[\n\r]/g;

// Character classes for ASCII (spec §2.1): one table lookup instead of a chain of compares.
const C_BAD = 0;
const C_SPACE = 1; // tab, LF, CR, space, comma (and the BOM, outside ASCII)
const C_HASH = 2;
const C_PUNCT = 3; // ! $ & ( ) : = @ [ ] { | }
const C_QUOTE = 4;
const C_OTHER = 5; // - and . (numbers, spreads)
const C_NAME = 6; // name start; C_NAME and C_DIGIT continue a name
const C_DIGIT = 7;
const CLASS = new Uint8Array(128);
for (const c of [9, 10, 13, 32, 44]) CLASS[c] = C_SPACE;
CLASS[35] = C_HASH;
for (const ch of '!$&():=@[]{|}') CLASS[ch.charCodeAt(0)] = C_PUNCT;
CLASS[34] = C_QUOTE;
CLASS[45] = CLASS[46] = C_OTHER;
for (let c = 65; c <= 90; c++) CLASS[c] = CLASS[c + 32] = C_NAME;
CLASS[95] = C_NAME;
for (let c = 48; c <= 57; c++) CLASS[c] = C_DIGIT;

function isNameStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
}
function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

export class Lexer {
  /** offset after the current token */
  pos = 0;
  /** offset of the current token */
  start = 0;
  tokens = 0;
  /** stable reason once next() returned ERR */
  error = '';
  private failed = false;

  constructor(
    private readonly src: string,
    private readonly maxTokens: number,
  ) {}

  fail(reason: string): number {
    if (!this.failed) this.error = reason;
    this.failed = true;
    return ERR;
  }

  /** The text of the current NAME token. */
  text(): string {
    return this.src.slice(this.start, this.pos);
  }

  /** Whether the current token's text is exactly `word` (no allocation). */
  is(word: string): boolean {
    return this.pos - this.start === word.length && this.src.startsWith(word, this.start);
  }

  next(): number {
    if (this.failed) return ERR;
    const s = this.src;
    const n = s.length;
    let i = this.pos;
    let c = 0;
    let k = 0;
    for (;;) {
      if (i >= n) {
        this.pos = this.start = n;
        return EOF;
      }
      c = s.charCodeAt(i);
      k = c < 128 ? CLASS[c]! : c === 0xfeff ? C_SPACE : C_BAD;
      if (k === C_SPACE) {
        i++;
      } else if (k === C_HASH) {
        LINE_END.lastIndex = i;
        i = LINE_END.exec(s) === null ? n : LINE_END.lastIndex;
      } else {
        break;
      }
    }
    if (++this.tokens > this.maxTokens) return this.fail('token-limit');
    this.start = i;
    if (k === C_NAME) {
      let j = i + 1;
      while (j < n) {
        const d = s.charCodeAt(j);
        if (d < 128 && CLASS[d]! >= C_NAME) j++;
        else break;
      }
      this.pos = j;
      return NAME;
    }
    if (k === C_PUNCT) {
      this.pos = i + 1;
      return c;
    }
    if (k === C_QUOTE) return this.string(i);
    if (k === C_DIGIT || c === 45) return this.number(i);
    if (c === 46 && s.charCodeAt(i + 1) === 46 && s.charCodeAt(i + 2) === 46) {
      this.pos = i + 3;
      return SPREAD;
    }
    return this.fail('syntax');
  }

  private string(i: number): number {
    const s = this.src;
    if (s.charCodeAt(i + 1) === 34 && s.charCodeAt(i + 2) === 34) {
      // block string: only \""" escapes; any backslash right before """ escapes it
      let j = i + 3;
      for (;;) {
        const k = s.indexOf('"""', j);
        if (k === -1) return this.fail('syntax');
        if (s.charCodeAt(k - 1) === 92) {
          j = k + 3;
          continue;
        }
        this.pos = k + 3;
        return VALUE;
      }
    }
    // "…": a quote ends the string unless an odd run of backslashes precedes it
    let j = i + 1;
    for (;;) {
      const k = s.indexOf('"', j);
      if (k === -1) return this.fail('syntax');
      let b = k - 1;
      while (s.charCodeAt(b) === 92) b--;
      if (((k - 1 - b) & 1) === 1) {
        j = k + 1;
        continue;
      }
      this.pos = k + 1;
      return VALUE;
    }
  }

  private number(i: number): number {
    const s = this.src;
    let j = i;
    if (s.charCodeAt(j) === 45) j++;
    const digits = (): boolean => {
      const from = j;
      while (isDigit(s.charCodeAt(j))) j++;
      return j > from;
    };
    if (!digits()) return this.fail('syntax');
    if (s.charCodeAt(j) === 46) {
      j++;
      if (!digits()) return this.fail('syntax');
    }
    const e = s.charCodeAt(j);
    if (e === 101 || e === 69) {
      j++;
      const sign = s.charCodeAt(j);
      if (sign === 43 || sign === 45) j++;
      if (!digits()) return this.fail('syntax');
    }
    // graphql-js: a number may not run into a name or a dot
    const after = s.charCodeAt(j);
    if (after === 46 || isNameStart(after)) return this.fail('syntax');
    this.pos = j;
    return VALUE;
  }
}
