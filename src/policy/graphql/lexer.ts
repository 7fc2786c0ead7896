/**
 * A bounded GraphQL lexer for the classifier. Unlike graphql-js's `Lexer` it allocates no
 * token objects (graphql-js links every token to the previous one, so a 1 MiB document of
 * small tokens keeps ~500k objects alive) and skips strings, block strings and comments with
 * native `indexOf`/regex search, which is what keeps an 8 MiB string argument in milliseconds.
 *
 * It must cut tokens exactly where the GraphQL spec (Oct 2021, graphql-js 16) does: string,
 * block-string and comment boundaries decide what the classifier sees. Where it is looser
 * than the spec (some escapes or number shapes) the server rejects the document, so nothing
 * runs; being looser never changes where a string or comment ends.
 *
 * Servers' lexers disagree with the spec and with each other at a few places (docs/policy.md
 * has the survey). Wherever two of them could cut the same text differently, the lexer fails
 * with `ambiguous` instead of picking one reading: a comment holding a character some lexer
 * ends comments at (a CR without LF, U+2028/U+2029, U+0085, other control characters, DEL,
 * an unpaired surrogate); a BOM anywhere but at the start; a raw line break in a `"…"`
 * string; `\"""` in a block string, or a block string closed by a run of more than three
 * quotes; an inline fragment whose `on` runs straight into a comment.
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

/**
 * What a comment may not hold without ending it somewhere: LF ends it for every lexer; CR
 * for all but graphql-ruby (which runs to LF); U+2028/U+2029 for older graphql-java; any
 * other control character or DEL for Hot Chocolate, gqlparser and graphql-php; an unpaired
 * surrogate for graphql-js. A surrogate pair (an emoji) is fine.
 */
const COMMENT_STOP = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]/g;
/** commentEnd / stringEnd: the text could be cut differently by another server's lexer. */
const AMBIGUOUS = -2;

// Character classes (GraphQL spec §2.1): one table lookup instead of a chain of compares. The table
// covers every UTF-16 code unit (64 KiB, of which a scan touches the ASCII start and the
// BOM), so the hot loops need no `c < 128` test. Class 0: not allowed outside a string.
const C_SPACE = 1; // tab, LF, CR, space, comma (a BOM only at the start: see Lexer)
const C_HASH = 2;
const C_PUNCT = 3; // ! $ & ( ) : = @ [ ] { | }
const C_QUOTE = 4;
const C_OTHER = 5; // - and . (numbers, spreads)
const C_NAME = 6; // name start; C_NAME and C_DIGIT continue a name
const C_DIGIT = 7;
const CLASS = new Uint8Array(65536);
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
  ) {
    // a BOM at the start is skipped by every server; elsewhere Hot Chocolate and graphql-ruby refuse it
    if (src.charCodeAt(0) === 0xfeff) this.pos = 1;
    resetLineBreaks();
  }

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
    const cls = CLASS;
    let i = this.pos;
    let c = 0;
    let k = 0;
    for (;;) {
      if (i >= n) {
        this.pos = this.start = n;
        return EOF;
      }
      c = s.charCodeAt(i);
      k = cls[c]!;
      if (k === C_SPACE) {
        i++;
      } else if (k === C_HASH) {
        i = commentEnd(s, i);
        if (i < 0) return this.fail('ambiguous');
      } else {
        break;
      }
    }
    if (++this.tokens > this.maxTokens) return this.fail('token-limit');
    this.start = i;
    if (k === C_NAME) {
      let j = i + 1;
      while (j < n) {
        if (cls[s.charCodeAt(j)]! >= C_NAME) j++;
        else break;
      }
      this.pos = j;
      return NAME;
    }
    if (k === C_PUNCT) {
      this.pos = i + 1;
      return c;
    }
    let j = -1;
    if (k === C_QUOTE) j = stringEnd(s, i);
    else if (k === C_DIGIT || c === 45) j = numberEnd(s, i);
    else if (c === 46 && s.charCodeAt(i + 1) === 46 && s.charCodeAt(i + 2) === 46) {
      this.pos = i + 3;
      return SPREAD;
    }
    if (j < 0) return this.fail(j === AMBIGUOUS || c === 0xfeff ? 'ambiguous' : 'syntax');
    this.pos = j;
    return VALUE;
  }

  /** Whether a comment lies between offset `from` and the current token. */
  commentSince(from: number): boolean {
    const h = this.src.indexOf('#', from);
    return h !== -1 && h < this.start;
  }

  /**
   * With the current token an opening bracket (`{`, `(` or `[`), skip past its matching
   * closing bracket and return the token after it. Brackets of all three kinds nest as one
   * counter, as the token-level skip always did. This is `next()` in one tight loop: the
   * same token boundaries, the same token count (and so the same token limit), the same
   * errors, with no per-token field writes.
   */
  skipGroup(): number {
    if (this.failed) return ERR;
    const end = skipGroupFrom(this.src, this.pos, this.tokens, this.maxTokens);
    this.tokens = groupTokens;
    if (end >= 0) {
      this.pos = end;
      return this.next();
    }
    this.start = groupStop;
    if (end === GROUP_TOKEN_LIMIT) return this.fail('token-limit');
    this.pos = groupStop;
    return this.fail(
      end === GROUP_AMBIGUOUS || this.src.charCodeAt(groupStop) === 0xfeff ? 'ambiguous' : 'syntax',
    );
  }
}

const GROUP_SYNTAX = -1;
const GROUP_TOKEN_LIMIT = -2;
const GROUP_AMBIGUOUS = -3;
/** Out-parameters of skipGroupFrom: the token count, and where it stopped on failure. */
let groupTokens = 0;
let groupStop = 0;

/**
 * The loop of Lexer#skipGroup: from i (just after an opening bracket) to just after its match.
 * A free function of its arguments, so its optimised code embeds no per-call object (a
 * method's OSR code did, and was thrown away by every GC that collected the lexer).
 */
function skipGroupFrom(s: string, i: number, tokens: number, max: number): number {
  const n = s.length;
  const cls = CLASS;
  let depth = 1;
  while (i < n) {
    const c = s.charCodeAt(i);
    const k = cls[c]!;
    if (k === C_SPACE) {
      i++;
      continue;
    }
    if (k === C_HASH) {
      i = commentEnd(s, i);
      if (i < 0) {
        groupTokens = tokens;
        groupStop = n;
        return GROUP_AMBIGUOUS;
      }
      continue;
    }
    if (++tokens > max) {
      groupTokens = tokens;
      groupStop = i;
      return GROUP_TOKEN_LIMIT;
    }
    if (k === C_NAME) {
      i++;
      while (i < n) {
        if (cls[s.charCodeAt(i)]! >= C_NAME) i++;
        else break;
      }
    } else if (k === C_PUNCT) {
      i++;
      if (c === LBRACE || c === LPAREN || c === LBRACKET) depth++;
      else if ((c === RBRACE || c === RPAREN || c === RBRACKET) && --depth === 0) {
        groupTokens = tokens;
        return i;
      }
    } else {
      let j = -1;
      if (k === C_QUOTE) j = stringEnd(s, i);
      else if (k === C_DIGIT || c === 45) j = numberEnd(s, i);
      else if (c === 46 && s.charCodeAt(i + 1) === 46 && s.charCodeAt(i + 2) === 46) j = i + 3;
      if (j < 0) {
        groupTokens = tokens;
        groupStop = i;
        return j === AMBIGUOUS ? GROUP_AMBIGUOUS : GROUP_SYNTAX;
      }
      i = j;
    }
  }
  // end of document inside the group
  groupTokens = tokens;
  groupStop = n;
  return GROUP_SYNTAX;
}

/**
 * Offset of the end of a `#` comment starting at i (its LF or CRLF, or the end of the
 * document), or AMBIGUOUS when it holds a character some server's lexer would end it at.
 */
function commentEnd(s: string, i: number): number {
  let from = i + 1;
  for (;;) {
    COMMENT_STOP.lastIndex = from;
    if (COMMENT_STOP.exec(s) === null) return s.length;
    const at = COMMENT_STOP.lastIndex - 1;
    const c = s.charCodeAt(at);
    if (c === 10) return at;
    if (c === 13) return s.charCodeAt(at + 1) === 10 ? at : AMBIGUOUS;
    // a high surrogate followed by a low one is one character; anything else is disputed
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(at + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        from = at + 2;
        continue;
      }
    }
    return AMBIGUOUS;
  }
}

// Where the next LF and CR are, from the last position asked about: a `"…"` string may hold
// neither (Hot Chocolate ends a string at a raw line break without an error and lexes on).
// Positions only grow within one document, so one indexOf per line break covers it.
let nextLf = -2;
let nextCr = -2;

/** Reset the line-break memo for a new document. */
function resetLineBreaks(): void {
  nextLf = -2;
  nextCr = -2;
}

/** Whether s has an LF or CR in [from, to). */
function lineBreakIn(s: string, from: number, to: number): boolean {
  if (nextLf !== -1 && nextLf < from) nextLf = s.indexOf('\n', from);
  if (nextCr !== -1 && nextCr < from) nextCr = s.indexOf('\r', from);
  return (nextLf !== -1 && nextLf < to) || (nextCr !== -1 && nextCr < to);
}

/**
 * Offset after the string or block string starting at i (a `"`); -1 if unterminated,
 * AMBIGUOUS where servers' lexers would end it elsewhere.
 */
function stringEnd(s: string, i: number): number {
  if (s.charCodeAt(i + 1) === 34 && s.charCodeAt(i + 2) === 34) {
    // block string: the spec ends it at the first """ not escaped as \"""; graphql-java's
    // lazy rule ends it at \""" too, and gqlparser and graphql-ruby's C lexer close a run
    // of four or more quotes with its last three: either is ambiguous
    const k = s.indexOf('"""', i + 3);
    if (k === -1) return -1;
    if (s.charCodeAt(k - 1) === 92 || s.charCodeAt(k + 3) === 34) return AMBIGUOUS;
    return k + 3;
  }
  // "…": a quote ends the string unless an odd run of backslashes precedes it
  let j = i + 1;
  for (;;) {
    const k = s.indexOf('"', j);
    if (k === -1) return -1;
    let b = k - 1;
    while (s.charCodeAt(b) === 92) b--;
    if (((k - 1 - b) & 1) === 1) {
      j = k + 1;
      continue;
    }
    return lineBreakIn(s, i + 1, k) ? AMBIGUOUS : k + 1;
  }
}

/** Offset after the number starting at i (a digit or `-`); -1 if it is malformed. */
function numberEnd(s: string, i: number): number {
  let j = i;
  if (s.charCodeAt(j) === 45) j++;
  // no closures here: tsx (esbuild keepNames) wraps every closure creation in a __name() call
  let from = j;
  while (isDigit(s.charCodeAt(j))) j++;
  if (j === from) return -1;
  if (s.charCodeAt(j) === 46) {
    from = ++j;
    while (isDigit(s.charCodeAt(j))) j++;
    if (j === from) return -1;
  }
  const e = s.charCodeAt(j);
  if (e === 101 || e === 69) {
    j++;
    const sign = s.charCodeAt(j);
    if (sign === 43 || sign === 45) j++;
    from = j;
    while (isDigit(s.charCodeAt(j))) j++;
    if (j === from) return -1;
  }
  // graphql-js: a number may not run into a name or a dot
  const after = s.charCodeAt(j);
  if (after === 46 || isNameStart(after)) return -1;
  return j;
}
