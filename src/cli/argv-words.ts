/**
 * What the argv tokenizer knows about words, shared by its steps (`argv.ts`) and its mistake
 * recognisers (`argv-mistakes.ts`): the state of one scan, which of a command's flags a word
 * names, how many words a flag occupies, and the rewrites a correction is made of.
 */
import { fileAlternative, flagKind, flagName, positionalParam, type FlagKind } from './define.js';
import type { AnyTool, FileInputAlternative, ParamDef } from './types.js';

/** A `--x-file` argument, read later. */
export interface FileRef {
  param: string;
  /** the file flag without dashes */
  flag: string;
  path: string;
  parseAs: 'json' | 'text';
  /** where in argv the flag and its path are (`--x-file=p` is one word) */
  at: number;
  words: number;
}

export interface ParsedArgv {
  values: Record<string, unknown>;
  files: FileRef[];
  help: boolean;
}

/** The parameter a flag word names, and how its value is given. */
export type Entry =
  | { kind: FlagKind; param: string; p: ParamDef; negated?: boolean }
  | { kind: 'file'; param: string; p: ParamDef; alt: FileInputAlternative };

/** One pass over a command's words: what it takes, and what was read so far. */
export interface Scan {
  def: AnyTool;
  argv: readonly string[];
  /** the parameter that takes the vendor's words after `--`, if the command has one */
  rest: string | undefined;
  /** the one bare word the command takes, if any */
  positional: string | undefined;
  out: ParsedArgv;
  /** each parameter given so far: the flag it was given as, and where its words are */
  seen: Map<string, { key: string; at: number; words: number }>;
}

/** A fresh scan of `argv` for `def`. */
export function startScan(def: AnyTool, argv: readonly string[]): Scan {
  return {
    def,
    argv,
    rest: Object.entries(def.parameters).find(([, p]) => p.cliRest)?.[0],
    positional: positionalParam(def),
    out: { values: {}, files: [], help: false },
    seen: new Map(),
  };
}

/** Whether `tok` is the one bare word the command takes (`run gh_cli`), not yet given. */
export function takesPositional(s: Scan, tok: string): boolean {
  return s.positional !== undefined && !tok.startsWith('-') && !s.seen.has(s.positional);
}

/** A word that starts with a dash, cut into the name typed and its inline value. */
export interface FlagWord {
  /** where in argv the word is */
  i: number;
  tok: string;
  /** `--` or `-`, as typed */
  dash: '--' | '-';
  /** the name as typed, without dashes and without `=value` */
  name: string;
  /** the index of the first `=` in the word, -1 when none */
  eq: number;
  inline: string | undefined;
  /** the parameter it names; a single-dash word names none */
  entry: Entry | undefined;
}

/** The flag word at `i`, and which of this command's flags it names. */
export function flagWord(def: AnyTool, argv: readonly string[], i: number): FlagWord {
  const tok = argv[i]!;
  const long = tok.startsWith('--');
  const eq = tok.indexOf('=');
  const name = tok.replace(/^--?/, '').slice(0, eq < 0 ? undefined : eq - (long ? 2 : 1));
  return {
    i,
    tok,
    dash: long ? '--' : '-',
    name,
    eq,
    inline: eq < 0 ? undefined : tok.slice(eq + 1),
    entry: long ? lookup(def, name) : undefined,
  };
}

/** A flag word that names one of this command's flags, with the flag it was given as (`key`). */
export interface FlagUse extends FlagWord {
  entry: Entry;
  /** the flag without dashes, as the agent gave it: the file flag for a file */
  key: string;
}

/** A known flag word as used: `key` is the file flag for a file, else the parameter's flag. */
export function flagUse(word: FlagWord & { entry: Entry }): FlagUse {
  const e = word.entry;
  return { ...word, key: e.kind === 'file' ? e.alt.fileFlag : flagName(e.param) };
}

export const BOOL_WORDS: Readonly<Record<string, boolean>> = {
  true: true,
  yes: true,
  '1': true,
  false: false,
  no: false,
  '0': false,
};
export const NUMBER_RE = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * Typographic dashes that word processors and chat front ends put where `--` was typed
 * (hyphen, non-breaking hyphen, figure dash, en dash, em dash, horizontal bar, minus sign,
 * small and full-width hyphen-minus).
 */
export const TYPO_DASHES = /^[\u2010-\u2015\u2212\uFE58\uFE63\uFF0D]+/;

/** The entry a flag name (no dashes) names: a flag, an alias, a `--no-` form or a file flag. */
export function lookup(def: AnyTool, name: string): Entry | undefined {
  for (const [param, p] of Object.entries(def.parameters)) {
    if (p.gadgetOnly || p.cliRest) continue;
    const canon = flagName(param);
    if (name === canon || p.cliAliases?.includes(name)) return { kind: flagKind(p), param, p };
    if (p.type === 'boolean' && name === `no-${canon}`) return { kind: 'boolean', param, p, negated: true };
    const alt = fileAlternative(def, param);
    if (alt && name === alt.fileFlag) return { kind: 'file', param, p, alt };
  }
  return undefined;
}

/** The entry a `--name` or `--name=value` word names, if it is one of this command's flags. */
export function flagOf(def: AnyTool, word: string): Entry | undefined {
  if (!word.startsWith('--') || word === '--') return undefined;
  const eq = word.indexOf('=');
  return lookup(def, word.slice(2, eq < 0 ? undefined : eq));
}

/** How many words a flag occupies starting at `i` (the flag, and its value when separate). */
export function span(def: AnyTool, argv: readonly string[], i: number): number {
  const e = flagOf(def, argv[i]!);
  if (!e || argv[i]!.includes('=')) return 1;
  if (e.kind === 'boolean')
    return !e.negated && argv[i + 1] !== undefined && BOOL_WORDS[argv[i + 1]!.toLowerCase()] !== undefined
      ? 2
      : 1;
  return argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--') ? 2 : 1;
}

/**
 * The vendor's words moved after `--`: from `i` on, every word that is not one of this
 * command's flags (with its value) goes after `--`, in order, before any words already there.
 */
export function vendorFix(def: AnyTool, argv: readonly string[], i: number): string[] {
  const dd = argv.indexOf('--');
  const end = dd < 0 ? argv.length : dd;
  const keep: string[] = [];
  const stray: string[] = [];
  for (let j = i; j < end; ) {
    const n = flagOf(def, argv[j]!) ? span(def, argv, j) : 1;
    (n > 1 || flagOf(def, argv[j]!) ? keep : stray).push(...argv.slice(j, j + n));
    j += n;
  }
  return [...argv.slice(0, i), ...keep, '--', ...stray, ...(dd < 0 ? [] : argv.slice(dd + 1))];
}

/**
 * A flag and its value that reached us as one word: `--method GET` (quoted together),
 * `--method GET --url https://x` (the rest of a command in one word), `--method:GET`.
 * Split only where each piece starts with one of this command's flags; a value keeps its
 * inner spaces (`--header content-type: application/json`).
 */
export function splitWord(def: AnyTool, tok: string): string[] | undefined {
  const colon = /^--([a-z][a-z0-9-]*):(.+)$/s.exec(tok);
  if (colon && lookup(def, colon[1]!)) return [`--${colon[1]}=${colon[2]}`];
  if (!/^--[a-z][a-z0-9-]*\s/.test(tok)) return undefined;
  const out: string[] = [];
  for (const piece of tok.trim().split(/\s+(?=--[a-z])/)) {
    const m = /^--([a-z][a-z0-9-]*)(?:\s+(.*))?$/s.exec(piece);
    if (!m || !lookup(def, m[1]!)) return out.length ? [...out, piece] : undefined;
    out.push(`--${m[1]}`, ...(m[2] === undefined ? [] : [m[2]]));
  }
  return out;
}

/** `argv` with `count` words at `at` replaced by `words`. */
export const replace = (
  argv: readonly string[],
  at: number,
  count: number,
  words: readonly string[],
): string[] => [...argv.slice(0, at), ...words, ...argv.slice(at + count)];

/** The argv with this flag's value replaced by `v` (inline, or the next word). */
export function valueAt(argv: readonly string[], f: FlagWord): (v: string) => string[] {
  return (v) =>
    f.inline !== undefined
      ? replace(argv, f.i, 1, [`${f.tok.slice(0, f.eq)}=${v}`])
      : replace(argv, f.i + 1, 1, [v]);
}
