/**
 * Examples as copy-pasteable shell (issue 6): bare scalars when shell-safe, single quotes
 * only when needed, enums raw, primitive arrays as repeated flags, objects and arrays of
 * objects as one single-quoted JSON argument. tests/cli/examples.test.ts runs every
 * rendered example through `bash -c` back into the parser.
 */
import { commandPath, flagKind, flagName } from './define.js';
import type { AnyTool, ParamDef } from './types.js';

// Characters no POSIX shell treats specially in an unquoted word (outside the first
// position for `=` and `~`, which we also avoid at the start).
const SAFE_RE = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** One shell word: bare when safe, else single-quoted with `'\''` for embedded quotes. */
export function shellQuote(s: string): string {
  if (s !== '' && SAFE_RE.test(s) && !s.startsWith('=')) return s;
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** The argv words for one parameter value (without the command path). */
export function paramWords(name: string, p: ParamDef, value: unknown): string[] {
  const flag = `--${flagName(name)}`;
  switch (flagKind(p)) {
    case 'boolean':
      return [value ? flag : `--no-${flagName(name)}`];
    case 'repeat':
      return (value as unknown[]).flatMap((v) => [flag, String(v)]);
    case 'json':
      return [flag, JSON.stringify(value)];
    case 'rest':
      return ['--', ...(value as unknown[]).map(String)];
    default:
      return [flag, String(value)];
  }
}

/** The argv an example stands for: flags in declaration order, rest arguments last. */
export function exampleArgv(def: AnyTool, params: Readonly<Record<string, unknown>>): string[] {
  const words: string[] = [];
  let rest: string[] = [];
  for (const [name, p] of Object.entries(def.parameters)) {
    const v = params[name];
    if (v === undefined || p.gadgetOnly) continue;
    if (p.cliRest) rest = paramWords(name, p, v);
    else words.push(...paramWords(name, p, v));
  }
  return [...words, ...rest];
}

/** Render argv as shell; JSON arguments are always single-quoted so their keys stay double-quoted. */
export function renderArgv(def: AnyTool, argv: readonly string[]): string {
  const jsonFlags = new Set(
    Object.entries(def.parameters)
      .filter(([, p]) => flagKind(p) === 'json')
      .map(([n]) => `--${flagName(n)}`),
  );
  return argv
    .map((w, i) => (i > 0 && jsonFlags.has(argv[i - 1]!) ? `'${w.replaceAll("'", `'\\''`)}'` : shellQuote(w)))
    .join(' ');
}

/** A full example command line: `clibroker policy classify --method GET --url …`. */
export function renderExample(program: string, def: AnyTool, params: Readonly<Record<string, unknown>>): string {
  const args = renderArgv(def, exampleArgv(def, params));
  return [program, ...commandPath(def), args].filter((s) => s !== '').join(' ');
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
