/**
 * What is wrong with a JSON argument, in words an agent can act on, and what it most
 * likely meant. JSON.parse's own message is not used: it quotes a fragment of the input
 * (which may hold a secret) and says "unexpected token" where an agent needs "single
 * quotes" or "a trailing comma". Pure, no imports: it runs only on the failure path.
 *
 * Two readers: a strict one that finds the first problem (its offset, line and column, and
 * what is wrong), and a lenient one (single quotes, unquoted keys and words, trailing or
 * missing commas, comments, Python's True/False/None, curly quotes) whose reading, written
 * back as strict JSON, becomes the corrected command. The lenient reading is only ever
 * offered; the CLI itself accepts strict JSON alone.
 */

/** The first problem of a text that is not JSON. */
export interface JsonDiagnosis {
  /** 0-based offset of the problem */
  offset: number;
  line: number;
  column: number;
  /** what is wrong, e.g. `single quotes: JSON strings and keys take double quotes` */
  problem: string;
  /** the text at the problem (a few characters; the caller redacts and caps it) */
  near: string;
  /** strict JSON for the lenient reading, when the text can be read leniently */
  repaired?: string;
}

class Bad extends Error {
  constructor(
    readonly offset: number,
    readonly problem: string,
  ) {
    super(problem);
  }
}

const WS = new Set([' ', '\t', '\n', '\r']);
const IDENT_START = /[A-Za-z_$]/;
const NUMBER_AT = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const PY_WORDS: Readonly<Record<string, string>> = { True: 'true', False: 'false', None: 'null' };

/** The strict reader: throws Bad at the first problem. */
function strict(s: string): void {
  let i = 0;
  const ws = () => {
    while (WS.has(s[i]!)) i++;
  };
  const prevNonWs = (at: number): string | undefined => {
    let j = at - 1;
    while (j >= 0 && WS.has(s[j]!)) j--;
    return s[j];
  };
  const word = (at: number) => /^[A-Za-z_$][\w$.-]*/.exec(s.slice(at))?.[0] ?? s[at]!;
  const unexpected = (what: string): never => {
    const c = s[i];
    if (c === undefined)
      throw new Bad(i, `the JSON ends early: ${what} is missing (a bracket or quote not closed?)`);
    if (c === "'" || c === '‘' || c === '’')
      throw new Bad(i, 'single quotes: JSON strings and keys take double quotes');
    if (c === '“' || c === '”') throw new Bad(i, 'curly quotes: JSON takes plain double quotes (")');
    if (c === '/') throw new Bad(i, 'a comment: JSON has no comments');
    if ((c === '}' || c === ']') && prevNonWs(i) === ',')
      throw new Bad(i - 1, `a trailing comma before ${c}`);
    if (IDENT_START.test(c)) {
      const w = word(i);
      if (PY_WORDS[w]) throw new Bad(i, `${w} is not JSON: write ${PY_WORDS[w]}`);
      if (w === 'NaN' || w === 'Infinity' || w === 'undefined') throw new Bad(i, `${w} is not a JSON value`);
      throw new Bad(
        i,
        `the bare word ${w}: JSON text values take double quotes (only true, false and null are bare)`,
      );
    }
    throw new Bad(i, `unexpected ${JSON.stringify(c)}: expected ${what}`);
  };
  const string = () => {
    i++;
    for (;;) {
      const c = s[i];
      if (c === undefined) throw new Bad(i, 'a string is not closed (a " is missing)');
      if (c === '"') {
        i++;
        return;
      }
      if (c < ' ')
        throw new Bad(
          i,
          'a raw line break or control character inside a string: write it as \\n (or \\t, \\u00XX)',
        );
      if (c === '\\') {
        const e = s[i + 1];
        if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(s.slice(i + 2, i + 6))) i += 6;
        else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else
          throw new Bad(
            i,
            `the escape \\${e ?? ''} is not JSON (only \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)`,
          );
        continue;
      }
      i++;
    }
  };
  const value = (): void => {
    ws();
    const c = s[i];
    if (c === '{' || c === '[' || c === '"') {
      if (c === '{') object();
      else if (c === '[') array();
      else string();
      return;
    }
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
      NUMBER_AT.lastIndex = i;
      const m = NUMBER_AT.exec(s);
      if (!m) throw new Bad(i, 'a malformed number');
      i += m[0].length;
      if (/[\d.]/.test(s[i] ?? ''))
        throw new Bad(i, 'a malformed number (no leading zeros, digits after the dot)');
      return;
    }
    for (const lit of ['true', 'false', 'null']) {
      if (s.startsWith(lit, i) && !/[\w$]/.test(s[i + lit.length] ?? '')) {
        i += lit.length;
        return;
      }
    }
    unexpected('a value');
  };
  const members = (close: '}' | ']', member: () => void) => {
    i++;
    ws();
    if (s[i] === close) {
      i++;
      return;
    }
    for (;;) {
      member();
      ws();
      if (s[i] === ',') {
        i++;
        ws();
        if (s[i] === close) throw new Bad(i - 1 - countWsBefore(i), `a trailing comma before ${close}`);
        continue;
      }
      if (s[i] === close) {
        i++;
        return;
      }
      const c = s[i];
      if (c === '"' || c === '{' || c === '[' || (c !== undefined && IDENT_START.test(c)) || c === "'") {
        throw new Bad(i, `a comma is missing before this ${close === '}' ? 'member' : 'element'}`);
      }
      unexpected(`',' or '${close}'`);
    }
  };
  const countWsBefore = (at: number) => {
    let n = 0;
    while (WS.has(s[at - 1 - n]!)) n++;
    return n;
  };
  const object = () =>
    members('}', () => {
      ws();
      const c = s[i];
      if (c === '"') string();
      else if (c !== undefined && IDENT_START.test(c))
        throw new Bad(i, `the key ${word(i)} is not quoted: JSON keys take double quotes`);
      else unexpected('a key in double quotes');
      ws();
      if (s[i] !== ':') unexpected("':' after the key");
      i++;
      value();
    });
  const array = () => members(']', value);
  value();
  ws();
  if (i < s.length)
    throw new Bad(
      i,
      'more text after the JSON value (one argument takes one value; quote the whole JSON as one word)',
    );
}

/** The lenient reader: the most likely meaning, or throws. */
function lenient(s: string): unknown {
  let i = 0;
  const ws = () => {
    for (;;) {
      while (WS.has(s[i]!)) i++;
      if (s.startsWith('//', i)) while (i < s.length && s[i] !== '\n') i++;
      else if (s.startsWith('/*', i)) {
        const end = s.indexOf('*/', i + 2);
        if (end < 0) throw new Error('comment');
        i = end + 2;
      } else return;
    }
  };
  const QUOTES: Readonly<Record<string, string>> = { '"': '"', "'": "'", '“': '”', '‘': '’' };
  const quoted = (): string => {
    const open = s[i]!;
    const close = QUOTES[open]!;
    let out = '';
    i++;
    for (;;) {
      const c = s[i];
      if (c === undefined) throw new Error('open string');
      i++;
      if (c === close || (open === '“' && c === '"')) return out;
      if (c === '\\') {
        const e = s[i++];
        if (e === undefined) throw new Error('escape');
        if (e === 'u') {
          const hex = s.slice(i, i + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new Error('escape');
          out += String.fromCharCode(Number.parseInt(hex, 16));
          i += 4;
        } else out += ({ n: '\n', r: '\r', t: '\t', b: '\b', f: '\f' } as Record<string, string>)[e] ?? e;
        continue;
      }
      out += c;
    }
  };
  const bare = (stop: RegExp): string => {
    const start = i;
    while (i < s.length && !stop.test(s[i]!)) i++;
    return s.slice(start, i).trim();
  };
  const value = (): unknown => {
    ws();
    const c = s[i];
    if (c === undefined) throw new Error('end');
    if (c === '{' || c === '[') return container(c);
    if (QUOTES[c]) return quoted();
    const w = bare(/[,\]}\n]/);
    if (w === '') throw new Error('empty');
    if (w === 'true' || w === 'True') return true;
    if (w === 'false' || w === 'False') return false;
    if (w === 'null' || w === 'None') return null;
    if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(w)) return Number(w);
    if (/[{}[\]"']/.test(w) || w === 'NaN' || w === 'Infinity' || w === 'undefined') throw new Error('word');
    return w;
  };
  const container = (open: string): unknown => {
    const isObj = open === '{';
    const close = isObj ? '}' : ']';
    const obj: Record<string, unknown> = {};
    const arr: unknown[] = [];
    i++;
    for (;;) {
      ws();
      if (s[i] === ',') {
        i++;
        continue;
      }
      if (s[i] === close) {
        i++;
        return isObj ? obj : arr;
      }
      if (s[i] === undefined) throw new Error('open');
      if (isObj) {
        const key = QUOTES[s[i]!] ? quoted() : bare(/[:\s,}]/);
        if (key === '') throw new Error('key');
        ws();
        if (s[i] !== ':') throw new Error('colon');
        i++;
        obj[key] = value();
      } else arr.push(value());
    }
  };
  const v = value();
  ws();
  if (i < s.length) throw new Error('trailing');
  return v;
}

/**
 * The first problem of `text` and its lenient reading, or undefined when `text` is JSON.
 */
export function diagnoseJson(text: string): JsonDiagnosis | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch {
    // read it ourselves below
  }
  let offset = 0;
  let problem = 'not valid JSON';
  try {
    strict(text);
  } catch (e) {
    if (!(e instanceof Bad)) throw e;
    offset = Math.max(0, e.offset);
    problem = e.problem;
  }
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  const d: JsonDiagnosis = { offset, line, column, problem, near: text.slice(offset, offset + 16) };
  for (const t of new Set([text, unwrap(text)])) {
    try {
      const v = lenient(t);
      if (v !== undefined) d.repaired = JSON.stringify(v);
      break;
    } catch {
      // no likely meaning: the problem alone is reported
    }
  }
  return d;
}

/**
 * What chat front ends and copy-paste wrap JSON in: a byte-order mark, a Markdown code
 * fence or backticks, and quotes escaped for a string the shell never saw (`{\"a\":1}`,
 * only when no quote is left unescaped).
 */
function unwrap(text: string): string {
  let t = text.replace(/^\uFEFF/, '').trim();
  const fence = /^```[A-Za-z]*[ \t]*\n([\s\S]*?)\n[ \t]*```$/.exec(t) ?? /^`([^`]*)`$/.exec(t);
  if (fence) t = fence[1]!.trim();
  if (t.includes('\\"') && !/(^|[^\\])"/.test(t)) t = t.replaceAll('\\"', '"');
  return t;
}
