/**
 * Examples as copy-pasteable shell: bare scalars when shell-safe, single quotes
 * only when needed, enums raw, primitive arrays as repeated flags, objects and arrays of
 * objects as one single-quoted JSON argument. tests/cli/examples.test.ts runs every
 * rendered example through `bash -c` back into the parser.
 */
import { commandPath, fileAlternative, flagKind, flagName } from './define.js';
import type { AnyTool, ParamDef } from './types.js';

// Characters no POSIX shell treats specially in an unquoted word (outside the first
// position for `=` and `~`, which we also avoid at the start).
const SAFE_RE = /^[A-Za-z0-9_@%+=:,./-]+$/;

// A line break or other control character inside single quotes would split an example
// over several lines; bash's $'…' writes it as an escape and keeps the line whole.
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const ESCAPES: Readonly<Record<string, string>> = {
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  "'": "\\'",
  '\\': '\\\\',
};

// \xHH is a byte in every locale; \uHHHH is the character's UTF-8 in a UTF-8 locale.
const hexEscape = (n: number): string =>
  n < 0x80 ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;

/** `$'…'` (bash, ksh, zsh): every control character as an escape, so the word stays on one line. */
function ansiQuote(s: string): string {
  const body = s.replace(
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029'\\]/g,
    (c) => ESCAPES[c] ?? hexEscape(c.charCodeAt(0)),
  );
  return `$'${body}'`;
}

/**
 * One shell word: bare when safe, else single-quoted with `'\''` for embedded quotes, or
 * `$'…'` when it holds a line break or another control character.
 */
export function shellQuote(s: string): string {
  if (s !== '' && SAFE_RE.test(s) && !s.startsWith('=')) return s;
  if (CONTROL_RE.test(s)) return ansiQuote(s);
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** A whole command line from argv words. */
export function renderWords(words: readonly string[]): string {
  return words.map(shellQuote).join(' ');
}

/** `--flag value`, or `--flag=--value` when the value starts with -- (the parser reads a separate --x as a flag). */
function flagValue(flag: string, value: string): string[] {
  return value.startsWith('--') ? [`${flag}=${value}`] : [flag, value];
}

/** The argv words for one parameter value (without the command path). */
export function paramWords(name: string, p: ParamDef, value: unknown): string[] {
  const flag = `--${flagName(name)}`;
  switch (flagKind(p)) {
    case 'boolean':
      return [value ? flag : `--no-${flagName(name)}`];
    case 'repeat':
      return (value as unknown[]).flatMap((v) => flagValue(flag, String(v)));
    case 'json':
      return [flag, JSON.stringify(value)];
    case 'rest':
      return ['--', ...(value as unknown[]).map(String)];
    default:
      return flagValue(flag, String(value));
  }
}

/**
 * The argv an example stands for: the positional word first (when it cannot be read as a
 * flag), flags in declaration order, rest arguments last. `viaFile` is read from stdin
 * through its `-file` flag (`--body-file -`).
 */
export function exampleArgv(
  def: AnyTool,
  params: Readonly<Record<string, unknown>>,
  viaFile?: string,
): string[] {
  const lead: string[] = [];
  const words: string[] = [];
  let rest: string[] = [];
  for (const [name, p] of Object.entries(def.parameters)) {
    const v = params[name];
    if (v === undefined || p.gadgetOnly) continue;
    const alt = name === viaFile ? fileAlternative(def, name) : undefined;
    if (alt) words.push(`--${alt.fileFlag}`, '-');
    else if (p.cliRest) rest = paramWords(name, p, v);
    else if (p.cliPositional && typeof v === 'string' && v !== '' && !v.startsWith('-')) lead.push(v);
    else words.push(...paramWords(name, p, v));
  }
  return [...lead, ...words, ...rest];
}

/** Render argv as shell; JSON arguments are always single-quoted so their keys stay double-quoted. */
export function renderArgv(def: AnyTool, argv: readonly string[]): string {
  const jsonFlags = new Set(
    Object.entries(def.parameters)
      .filter(([, p]) => flagKind(p) === 'json')
      .map(([n]) => `--${flagName(n)}`),
  );
  return argv
    .map((w, i) =>
      i > 0 && jsonFlags.has(argv[i - 1]!) && !CONTROL_RE.test(w)
        ? `'${w.replaceAll("'", `'\\''`)}'`
        : shellQuote(w),
    )
    .join(' ');
}

/**
 * A quoted heredoc holding `value` (text as is, JSON indented): `<<'EOF'`, its lines, `EOF`.
 * Nothing inside is expanded; the delimiter grows until no line of the text equals it.
 */
function heredoc(value: unknown): string {
  const text = typeof value === 'string' ? value : `${JSON.stringify(value, null, 2)}\n`;
  // a heredoc ends its text with a newline of its own
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  const lines = body.split('\n');
  let end = 'EOF';
  while (lines.includes(end)) end += '_';
  return `<<'${end}'\n${body}\n${end}`;
}

/**
 * A full example command line: `clibroker policy classify --method GET --url …`. When
 * `params` are those of one of the definition's examples (the same object) and that example
 * names a `viaFile` parameter, it is read from stdin (`--body-file -`) and the command ends
 * with a quoted heredoc holding its value, over several lines.
 */
export function renderExample(
  program: string,
  def: AnyTool,
  params: Readonly<Record<string, unknown>>,
): string {
  // found by identity, so every caller that renders an example's params gets its heredoc
  const via = def.examples?.find((e) => e.params === params)?.viaFile;
  const args = renderArgv(def, exampleArgv(def, params, via));
  const line = [program, ...commandPath(def), args].filter((s) => s !== '').join(' ');
  return via === undefined || params[via] === undefined ? line : `${line} ${heredoc(params[via])}`;
}

/** The `--flag value` fragment of the first example that sets a parameter, if any. */
export function flagExample(def: AnyTool, param: string): string | undefined {
  const p = def.parameters[param];
  if (!p) return undefined;
  for (const ex of def.examples ?? []) {
    const v = (ex.params as Record<string, unknown>)[param];
    if (v !== undefined) return renderArgv(def, paramWords(param, p, v));
  }
  return undefined;
}

/** The first example as a whole command, for the envelope's `example`. */
export function firstExample(program: string, def: AnyTool): string | undefined {
  const ex = def.examples?.[0];
  return ex ? renderExample(program, def, ex.params as Record<string, unknown>) : undefined;
}
