/**
 * The argv tokenizer, driven by a ToolDefinition (no oclif, yargs or commander). Long flags
 * and aliases, `--f=value`, natural booleans, negative numbers as values, repeated flags for
 * primitive arrays, one JSON argument for objects and arrays of objects,
 * `--<param>-file <path|->`, and the vendor's arguments after `--`. Files are only recorded
 * here; `inputs.ts` checks the one-stdin rule before reading anything.
 *
 * Every failure it can correct carries the corrected words (`fix`), which the CLI renders
 * as the envelope's `retry`: running that line must not bring the same error back, and must
 * keep every value the agent got right (no flag swallowed as another flag's value).
 *
 * This file holds the steps (a word, a flag's value, a scalar); the mistakes each step asks
 * about are recognisers in `argv-mistakes.ts`, and what both know about words is in
 * `argv-words.ts`.
 */
import {
  argumentsAfterSeparator,
  dashedValue,
  flagAndValueInOneWord,
  leftoverLineBreak,
  misspelledFlag,
  missingValue,
  negatedFlagWithValue,
  notABooleanWord,
  notANumber,
  notAnEnumValue,
  outOfRange,
  refuse,
  repeatedFlag,
  type ScalarValue,
  strayWord,
  typographicDash,
  unknownFlag,
  vendorFlagBeforeSeparator,
  vendorWordBeforeSeparator,
} from './argv-mistakes.js';
import {
  BOOL_WORDS,
  type FlagUse,
  flagUse,
  flagWord,
  type ParsedArgv,
  replace,
  type Scan,
  startScan,
  takesPositional,
  valueAt,
} from './argv-words.js';
import { fileAlternative, flagName } from './define.js';
import { parseJsonParam } from './json-param.js';
import type { AnyTool, ParamDef } from './types.js';

export type { FileRef, ParsedArgv } from './argv-words.js';

/**
 * A word that asks for help: `--help`, `-h`, and the spellings agents carry over from other
 * CLIs (`-help`, `-?`, `--help=true`). None of them can mean anything else here.
 */
export function isHelpWord(t: string | undefined): boolean {
  return t === '--help' || t === '-h' || t === '-help' || t === '-?' || t?.startsWith('--help=') === true;
}

/** A help word before any `--`: help wins over every parse error. */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const t of argv) {
    if (t === '--') return false;
    if (isHelpWord(t)) return true;
  }
  return false;
}

/**
 * Parse the arguments after the command path into parameter values: word by word, each
 * checked against the recognisers of the mistakes it could be, the first found thrown.
 * @throws CliFailure (flag-parse, json-parse, enum-mismatch, unknown-flag)
 */
export function parseArgv(def: AnyTool, argv: readonly string[]): ParsedArgv {
  if (wantsHelp(argv)) return { values: {}, files: [], help: true };
  const s = startScan(def, argv);
  for (let i = 0; i < argv.length; ) {
    const next = readWord(s, i);
    if (next === 'help') return { ...s.out, help: true };
    if (next === 'end') break;
    i = next;
  }
  return s.out;
}

/**
 * Read the word at `i` (and the value it takes): the index of the next word to read, `end`
 * after `--`, or `help` for a bare `help` where no vendor words go.
 */
export function readWord(s: Scan, i: number): number | 'end' | 'help' {
  const tok = s.argv[i]!;
  if (tok === '--') {
    refuse(argumentsAfterSeparator(s, i));
    s.out.values[s.rest!] = s.argv.slice(i + 1);
    return 'end';
  }
  refuse(typographicDash(s, i));
  if (tok === 'help' && !s.rest) return 'help';
  refuse(leftoverLineBreak(s, i));
  if (takesPositional(s, tok)) return readPositional(s, i);
  refuse(strayWord(s, i) ?? vendorWordBeforeSeparator(s, i));
  const word = flagWord(s.def, s.argv, i);
  const entry = word.entry;
  if (entry === undefined)
    return refuse(
      flagAndValueInOneWord(s, word) ??
        misspelledFlag(s, word) ??
        vendorFlagBeforeSeparator(s, word) ??
        unknownFlag(s, word),
    );
  const f = flagUse({ ...word, entry });
  refuse(repeatedFlag(s, f));
  const last = readFlagValue(s, f);
  s.seen.set(entry.param, { key: f.key, at: i, words: last - i + 1 });
  return last + 1;
}

/** The one bare word the command takes (`run gh_cli`); a second is a stray word. */
function readPositional(s: Scan, i: number): number {
  const param = s.positional!;
  s.out.values[param] = scalar({
    def: s.def,
    param,
    p: s.def.parameters[param]!,
    raw: s.argv[i]!,
    at: (v) => replace(s.argv, i, 1, [v]),
  });
  s.seen.set(param, { key: flagName(param), at: i, words: 1 });
  return i + 1;
}

/** Read the value of a known flag into the scan: the index of the last word it took. */
function readFlagValue(s: Scan, f: FlagUse): number {
  const e = f.entry;
  if (e.kind === 'boolean') return readBoolean(s, f);
  const { raw, last } = takeValue(s, f);
  if (e.kind === 'file') {
    s.out.files.push({
      param: e.param,
      flag: f.key,
      path: raw,
      parseAs: e.alt.parseAs,
      at: f.i,
      words: last - f.i + 1,
    });
  } else if (e.kind === 'json') {
    const words = last - f.i + 1;
    const alt = fileAlternative(s.def, e.param);
    // a path given where the JSON goes: the same path, to the -file flag
    const toFile = alt && ((path: string) => replace(s.argv, f.i, words, [`--${alt.fileFlag}`, path]));
    s.out.values[e.param] = parseJsonParam(s.def, e.param, f.key, raw, valueAt(s.argv, f), toFile);
  } else if (e.kind === 'repeat') {
    const list = (s.out.values[e.param] as unknown[] | undefined) ?? [];
    list.push(scalar({ def: s.def, param: e.param, p: e.p, raw, at: valueAt(s.argv, f) }));
    s.out.values[e.param] = list;
  } else {
    s.out.values[e.param] = scalar({ def: s.def, param: e.param, p: e.p, raw, at: valueAt(s.argv, f) });
  }
  return last;
}

/** `--x`, `--x=yes`, `--x no`, `--no-x`: a boolean word after the flag is its value. */
function readBoolean(s: Scan, f: FlagUse): number {
  const e = f.entry;
  if (e.kind === 'boolean' && e.negated) {
    refuse(negatedFlagWithValue(s, f));
    s.out.values[e.param] = false;
    return f.i;
  }
  refuse(notABooleanWord(s, f));
  const word = f.inline ?? s.argv[f.i + 1];
  const b = word === undefined ? undefined : BOOL_WORDS[word.toLowerCase()];
  s.out.values[e.param] = b ?? true;
  return f.inline === undefined && b !== undefined ? f.i + 1 : f.i;
}

/** The value of a flag that takes one: inline, or the next word when that is no flag. */
function takeValue(s: Scan, f: FlagUse): { raw: string; last: number } {
  if (f.inline !== undefined) return { raw: f.inline, last: f.i };
  refuse(missingValue(s, f) ?? dashedValue(s, f));
  return { raw: s.argv[f.i + 1]!, last: f.i + 1 };
}

/**
 * One scalar value, checked against its type.
 * @throws CliFailure flag-parse (number), enum-mismatch
 */
function scalar(v: ScalarValue): unknown {
  const { p, raw } = v;
  if (p.type === 'number') {
    refuse(notANumber(v) ?? outOfRange(v));
    return Number(raw);
  }
  if (p.type === 'enum') {
    refuse(notAnEnumValue(v));
    return raw;
  }
  if (p.type === 'array') return scalar({ ...v, p: { ...p.items, describe: p.describe } as ParamDef });
  return raw;
}
