/**
 * Where a configuration file's JSON is broken: the offset of the first character JSON.parse
 * could not take (the text's length when it ended too early), as a line and a column, with
 * a short excerpt of that line. V8's own message is not used: depending on the version it
 * gives an offset, a line and column, or neither, and it quotes the text, which may hold a
 * secret written inline. The excerpt is redacted like a log line and capped.
 */
import { redactLogText } from '../audit/logger.js';

const WS = new Set([' ', '\t', '\n', '\r']);
/** Nesting deeper than this is not followed: the position is then unknown. */
const MAX_DEPTH = 2000;

class At {
  constructor(readonly offset: number) {}
}

/** The offset of the first syntax error in `text`, or undefined when it parses (or is nested too deep to follow). */
export function syntaxErrorOffset(text: string): number | undefined {
  let i = 0;
  const fail = (at = i): never => {
    throw new At(at);
  };
  const ws = () => {
    while (i < text.length && WS.has(text[i]!)) i++;
  };
  const word = (w: string) => {
    for (const ch of w) if (text[i++] !== ch) fail(i - 1);
  };
  const str = () => {
    i++; // the opening quote
    for (;;) {
      if (i >= text.length) fail();
      const c = text.charCodeAt(i);
      if (c === 0x22) return void i++;
      if (c < 0x20) fail();
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail(i + 1);
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else fail(i + 1);
        continue;
      }
      i++;
    }
  };
  const num = () => {
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m || m[0] === '-' || m[0] === '') fail();
    i += m![0].length;
    if (i < text.length && /[0-9.eE+-]/.test(text[i]!)) fail();
  };
  const value = (depth: number): void => {
    if (depth > MAX_DEPTH) throw new RangeError('too deep');
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        str();
        ws();
        if (text[i] !== ':') fail();
        i++;
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') return void i++;
        fail();
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') return void i++;
        fail();
      }
    }
    if (c === '"') str();
    else if (c === 't') word('true');
    else if (c === 'f') word('false');
    else if (c === 'n') word('null');
    else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) num();
    else fail();
  };
  try {
    value(0);
    ws();
    if (i < text.length) fail();
    return undefined;
  } catch (e) {
    if (e instanceof At) return Math.min(e.offset, text.length);
    return undefined;
  }
}

/** The longest excerpt of the line shown. */
export const EXCERPT_MAX = 80;
/** How much of the line before the error the excerpt starts with. */
const BEFORE = 30;

/** Not a boundary a secret could straddle: the excerpt's ends are moved out past such characters before redacting. */
const TOKENISH = /[^\s"'{}[\],]/;

/** Line and column (from 1) of `offset`, and a redacted excerpt of its line of at most EXCERPT_MAX characters. */
export function describePosition(
  text: string,
  offset: number,
): { line: number; column: number; excerpt: string } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  let lineEnd = text.indexOf('\n', offset);
  if (lineEnd === -1) lineEnd = text.length;
  const col = offset - lineStart;
  const full = text.slice(lineStart, lineEnd).replace(/\r$/, '');
  // a window round the error, widened to whole words so no part of a secret is cut too short to recognise
  let a = Math.max(0, col - BEFORE);
  let b = Math.min(full.length, a + EXCERPT_MAX);
  while (a > 0 && TOKENISH.test(full[a - 1]!)) a--;
  while (b < full.length && TOKENISH.test(full[b]!)) b++;
  const raw = full.slice(a, b).replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ');
  const red = redactLogText(raw, Number.MAX_SAFE_INTEGER);
  let excerpt: string;
  if (red === raw) {
    // nothing secret-shaped: the window itself, from the error's left
    const from = Math.max(0, col - BEFORE) - a;
    excerpt = raw.slice(from, from + EXCERPT_MAX);
  } else excerpt = red.slice(0, EXCERPT_MAX);
  return { line, column: col + 1, excerpt: excerpt.trim() };
}
