/**
 * The mistakes agents make on a command's flags, one recogniser each. A recogniser looks at
 * one word (or one value) and answers with the coded problem, carrying the corrected words
 * (`fix`) when a correction exists, or with nothing when the mistake is not there; it throws
 * nothing, so each can be tested alone. The tokenizer (`argv.ts`) asks them in order and
 * throws the first problem found.
 */
import { flagName } from './define.js';
import { echo, fail, type FailureFields } from './envelope.js';
import { describeExpected, exampleValue, flagCandidates, flagList } from './flags.js';
import { suggest } from './suggest.js';
import type { AnyTool, ErrorType, ParamDef } from './types.js';
import {
  BOOL_WORDS,
  type FlagUse,
  type FlagWord,
  flagOf,
  NUMBER_RE,
  replace,
  type Scan,
  span,
  splitWord,
  takesPositional,
  TYPO_DASHES,
  vendorFix,
} from './argv-words.js';

/** A mistake a recogniser found: what `refuse` throws as a CliFailure. */
export interface ArgvProblem {
  type: ErrorType;
  message: string;
  fields: FailureFields;
}

const problem = (type: ErrorType, message: string, fields: FailureFields): ArgvProblem => ({
  type,
  message,
  fields,
});

/** Throw the problem a recogniser found, if it found one. */
export function refuse(p: ArgvProblem): never;
export function refuse(p: ArgvProblem | undefined): void;
export function refuse(p: ArgvProblem | undefined): void {
  if (p) fail(p.type, p.message, p.fields);
}

// ── words that are no flag ──────────────────────────────────────────────

/** Words after `--` for a command that passes nothing on. */
export function argumentsAfterSeparator(s: Scan, i: number): ArgvProblem | undefined {
  if (s.argv[i] !== '--' || s.rest) return undefined;
  // Dropping the `--` helps when our own flags follow it (or nothing does). Before a word
  // that is no flag of ours it would leave the same mistake, and dropping that word too
  // would drop what the agent wrote: no retry then.
  const next = s.argv[i + 1];
  const droppable = next === undefined || flagOf(s.def, next) !== undefined;
  return problem('flag-parse', 'this command takes no arguments after --', {
    got: s.argv.slice(i + 1).join(' '),
    hint: droppable
      ? 'every value belongs to a --flag; retry drops the --'
      : 'every value belongs to a --flag: give each word after -- to its flag',
    ...(droppable ? { fix: replace(s.argv, i, 1, []) } : {}),
  });
}

/** `—method` or a lone `—`: a flag (or the separator) whose dashes were typeset. */
export function typographicDash(s: Scan, i: number): ArgvProblem | undefined {
  const tok = s.argv[i]!;
  const typo = TYPO_DASHES.exec(tok)?.[0];
  if (typo === undefined) return undefined;
  const fixed = `--${tok.slice(typo.length).replace(/^-+/, '')}`;
  return problem(
    fixed === '--' ? 'flag-parse' : 'unknown-flag',
    `'${echo(tok, 60)}' starts with a typographic dash, not two ASCII hyphens`,
    {
      ...(fixed === '--' ? {} : { flag: echo(fixed.slice(2), 60) }),
      got: echo(tok, 60),
      hint: `flags start with -- (ASCII hyphens); retry writes ${echo(fixed.split('=')[0]!, 60)}`,
      fix: replace(s.argv, i, 1, [fixed]),
    },
  );
}

/** A line continuation or a `\n` the shell never saw: no value of ours, no vendor word. */
export function leftoverLineBreak(s: Scan, i: number): ArgvProblem | undefined {
  const tok = s.argv[i]!;
  if (tok !== '\\' && tok !== '\\n') return undefined;
  return problem('flag-parse', `unexpected argument '${tok}'`, {
    got: tok,
    hint: `a leftover ${tok === '\\' ? 'line continuation' : 'literal \\n'}; retry drops it`,
    fix: replace(s.argv, i, 1, []),
  });
}

/** A bare word where none is expected: a value without its flag. */
function bareWord(s: Scan, i: number): string | undefined {
  const tok = s.argv[i]!;
  if (takesPositional(s, tok)) return undefined;
  return !tok.startsWith('-') || tok === '-' ? tok : undefined;
}

/** A bare word for a command that takes no vendor words: it belongs to a flag. */
export function strayWord(s: Scan, i: number): ArgvProblem | undefined {
  const tok = bareWord(s, i);
  if (tok === undefined || s.rest) return undefined;
  return problem('flag-parse', `unexpected argument '${echo(tok, 60)}'`, {
    got: tok,
    hint: 'every value belongs to a --flag',
  });
}

/** A vendor CLI's word before `--`: it moves after it. */
export function vendorWordBeforeSeparator(s: Scan, i: number): ArgvProblem | undefined {
  const tok = bareWord(s, i);
  if (tok === undefined || !s.rest) return undefined;
  return problem('flag-parse', `unexpected argument '${echo(tok, 60)}'`, {
    got: tok,
    hint: "the vendor CLI's arguments go after --: retry moves them there",
    fix: vendorFix(s.def, s.argv, i),
  });
}

// ── flags that are none of this command's ───────────────────────────────

/** A flag and its value that reached us as one word (`--method GET`, `--method:GET`). */
export function flagAndValueInOneWord(s: Scan, w: FlagWord): ArgvProblem | undefined {
  if (w.entry) return undefined;
  const split = splitWord(s.def, w.tok);
  if (!split) return undefined;
  return problem('unknown-flag', `unknown flag ${echo(w.tok, 60)}: a flag and its value in one word`, {
    flag: echo(split[0]!.slice(2).split('=')[0]!, 60),
    got: echo(w.tok, 60),
    expected: flagList(s.def),
    hint: `the shell passed them as one argument (quoted together); give them as separate words: ${echo(split.join(' '), 120)}`,
    fix: replace(s.argv, w.i, 1, split),
  });
}

/** The refusal of a word that names no flag of this command, with a correction when there is one. */
function unknownFlagProblem(s: Scan, w: FlagWord, correction?: { hint: string; fix: string[] }): ArgvProblem {
  return problem('unknown-flag', `unknown flag ${w.dash}${echo(w.name, 60)}`, {
    // named as typed: `-m` is not `--m`, and an agent looks for the word it wrote
    flag: w.dash === '-' ? `-${w.name}` : w.name,
    // the flag, not its inline value: `--connection={…}` may carry a secret
    got: w.inline === undefined ? w.tok : `${w.tok.slice(0, w.eq)}=…`,
    expected: flagList(s.def),
    ...(correction ?? {}),
  });
}

/** The flag of this command an unknown name most likely meant. */
const closestFlag = (s: Scan, w: FlagWord): string | undefined => suggest(w.name, flagCandidates(s.def));

/** A misspelled flag: did you mean the close one (its inline value kept)? */
export function misspelledFlag(s: Scan, w: FlagWord): ArgvProblem | undefined {
  if (w.entry) return undefined;
  const close = closestFlag(s, w);
  if (!close) return undefined;
  return unknownFlagProblem(s, w, {
    hint: `did you mean --${close}?`,
    fix: replace(s.argv, w.i, 1, [w.inline === undefined ? `--${close}` : `--${close}=${w.inline}`]),
  });
}

/** An unknown flag, far from ours, where the vendor's words go after `--`: most likely the vendor's. */
export function vendorFlagBeforeSeparator(s: Scan, w: FlagWord): ArgvProblem | undefined {
  if (w.entry || !s.rest || closestFlag(s, w)) return undefined;
  return unknownFlagProblem(s, w, {
    hint: `if ${w.dash}${echo(w.name, 60)} is the vendor CLI's flag, it goes after --: retry moves it there`,
    fix: vendorFix(s.def, s.argv, w.i),
  });
}

/** An unknown flag with nothing to correct it to: the refusal alone. Asked after the others. */
export function unknownFlag(s: Scan, w: FlagWord): ArgvProblem {
  return unknownFlagProblem(s, w);
}

// ── this command's flags, misused ─────────────────────────────────────────

/** A flag given twice, or given directly and through its file flag. */
export function repeatedFlag(s: Scan, f: FlagUse): ArgvProblem | undefined {
  const first = f.entry.kind === 'repeat' ? undefined : s.seen.get(f.entry.param);
  if (!first) return undefined;
  const key = f.key;
  // Given twice, the last one is kept. Given directly and through its file flag, the
  // direct value is kept: it is in the command line, where a file may not exist.
  const dropCurrent = first.key !== key && f.entry.kind === 'file';
  return problem(
    'flag-parse',
    first.key === key ? `--${key} given more than once` : `give either --${first.key} or --${key}, not both`,
    {
      flag: first.key === key ? key : `${first.key},${key}`,
      hint: `retry keeps --${dropCurrent ? first.key : key}${first.key === key ? ', the last one' : ', the value on the command line'}`,
      fix: dropCurrent
        ? replace(s.argv, f.i, span(s.def, s.argv, f.i), [])
        : replace(s.argv, first.at, first.words, []),
    },
  );
}

/** The word after a flag that takes a separate value: one of our flags (or `--`, or none). */
const nextIsFlag = (s: Scan, next: string | undefined): boolean =>
  next === undefined || next === '--' || next === '--help' || flagOf(s.def, next) !== undefined;

/** The words of `--flag <value>` for a value the agent never gave: the definition's example value. */
function filledValue(def: AnyTool, param: string, flag: string): string[] | undefined {
  const v = exampleValue(def, param);
  if (v === undefined) return undefined;
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.startsWith('--') ? [`--${flag}=${s}`] : [`--${flag}`, s];
}

/**
 * A forgotten value: the next word is a flag in its own right (or there is none). Offer the
 * example's value; never `--key=--next`, which would swallow the next flag.
 */
export function missingValue(s: Scan, f: FlagUse): ArgvProblem | undefined {
  const e = f.entry;
  if (f.inline !== undefined || e.kind === 'boolean') return undefined;
  const next = s.argv[f.i + 1];
  if (!nextIsFlag(s, next)) return undefined;
  const filled =
    e.kind === 'file' ? filledValue(s.def, e.param, flagName(e.param)) : filledValue(s.def, e.param, f.key);
  return problem(
    'flag-parse',
    `--${f.key} needs a value${next === undefined ? '' : `, but the next word ${echo(next, 60)} is ${next === '--' ? 'the start of the vendor arguments' : 'a flag of this command'}`}`,
    {
      flag: f.key,
      ...(next === undefined ? {} : { got: next }),
      expected: describeExpected(s.def, e.param, e.kind === 'file'),
      hint: filled
        ? `give --${f.key} a value; retry uses the example's: ${filled.join(' ')}`
        : `give --${f.key} a value`,
      ...(filled ? { fix: replace(s.argv, f.i, 1, filled) } : {}),
    },
  );
}

/** A value that starts with `--` and is no flag of ours, given as a separate word. */
export function dashedValue(s: Scan, f: FlagUse): ArgvProblem | undefined {
  const next = s.argv[f.i + 1];
  if (f.inline !== undefined || f.entry.kind === 'boolean' || nextIsFlag(s, next) || !next!.startsWith('--'))
    return undefined;
  return problem('flag-parse', `--${f.key} needs a value; ${echo(next!, 60)} is not a flag of this command`, {
    flag: f.key,
    got: next,
    expected: describeExpected(s.def, f.entry.param, f.entry.kind === 'file'),
    hint: `a value that starts with -- is written --${f.key}=${echo(next!, 60)}`,
    fix: replace(s.argv, f.i, 2, [`--${f.key}=${next}`]),
  });
}

/** `--no-x=value`: the negated form takes none. */
export function negatedFlagWithValue(s: Scan, f: FlagUse): ArgvProblem | undefined {
  const e = f.entry;
  if (e.kind !== 'boolean' || !e.negated || f.inline === undefined) return undefined;
  const canon = flagName(e.param);
  const b = BOOL_WORDS[f.inline.toLowerCase()];
  return problem('flag-parse', `--no-${canon} takes no value`, {
    flag: canon,
    got: f.tok,
    expected: `--${canon} or --no-${canon}`,
    fix: replace(s.argv, f.i, 1, [b === false ? `--${canon}` : `--no-${canon}`]),
  });
}

/** `--x=maybe` for a boolean: only the boolean words are values. */
export function notABooleanWord(s: Scan, f: FlagUse): ArgvProblem | undefined {
  const e = f.entry;
  if (e.kind !== 'boolean' || e.negated || f.inline === undefined) return undefined;
  if (BOOL_WORDS[f.inline.toLowerCase()] !== undefined) return undefined;
  const canon = flagName(e.param);
  return problem('flag-parse', `--${canon} takes true|false|yes|no|1|0`, {
    flag: canon,
    got: f.inline,
    expected: `--${canon} or --no-${canon}`,
    fix: replace(s.argv, f.i, 1, [`--${canon}`]),
  });
}

// ── values ─────────────────────────────────────────────────────────────────

/** One scalar value as given. `at(v)` is the argv with this value replaced by `v`. */
export interface ScalarValue {
  def: AnyTool;
  param: string;
  p: ParamDef;
  raw: string;
  at: (v: string) => string[];
}

/** A number the agent most likely meant (`1,000`, `"42"`, `42s`), else the example's, kept in range. */
function likelyNumber(def: AnyTool, param: string, p: ParamDef & { type: 'number' }, raw: string): number {
  const cleaned = raw.replace(/^["']|["']$/g, '').replace(/[,_\s]/g, '');
  let n = NUMBER_RE.test(cleaned) ? Number(cleaned) : Number.parseFloat(cleaned);
  if (!Number.isFinite(n)) n = Number(exampleValue(def, param) ?? p.default ?? p.min ?? 1);
  if (p.integer) n = Math.trunc(n);
  if (p.min !== undefined) n = Math.max(p.min, n);
  if (p.max !== undefined) n = Math.min(p.max, n);
  return n;
}

function range(p: { min?: number; max?: number }): string {
  if (p.min !== undefined && p.max !== undefined) return `${p.min}..${p.max}`;
  return p.min !== undefined ? `at least ${p.min}` : `at most ${p.max}`;
}

/** A number flag given a word that is no number (or a fraction where an integer goes). */
export function notANumber({ def, param, p, raw, at }: ScalarValue): ArgvProblem | undefined {
  if (p.type !== 'number') return undefined;
  const n = Number(raw);
  if (NUMBER_RE.test(raw) && Number.isFinite(n) && !(p.integer && !Number.isInteger(n))) return undefined;
  const flag = flagName(param);
  return problem('flag-parse', `--${flag} takes ${p.integer ? 'an integer' : 'a number'}`, {
    flag,
    got: raw,
    expected: describeExpected(def, param),
    fix: at(String(likelyNumber(def, param, p, raw))),
  });
}

/** A number outside the flag's range: the retry uses the nearest allowed. */
export function outOfRange({ def, param, p, raw, at }: ScalarValue): ArgvProblem | undefined {
  if (p.type !== 'number') return undefined;
  const n = Number(raw);
  if (!((p.min !== undefined && n < p.min) || (p.max !== undefined && n > p.max))) return undefined;
  const flag = flagName(param);
  const nearest = String(likelyNumber(def, param, p, raw));
  return problem('flag-parse', `--${flag} must be ${range(p)}`, {
    flag,
    got: raw,
    expected: `--${flag} ${nearest} (${range(p)})`,
    hint: `retry uses ${nearest}, the nearest allowed value`,
    fix: at(nearest),
  });
}

/** A word that is none of an enum's values: did you mean the close one (else the default)? */
export function notAnEnumValue({ def, param, p, raw, at }: ScalarValue): ArgvProblem | undefined {
  if (p.type !== 'enum' || p.values.includes(raw)) return undefined;
  const flag = flagName(param);
  const close =
    p.values.find((v) => v.toLowerCase() === raw.toLowerCase()) ??
    suggest(
      raw,
      p.values.map((v) => ({ name: v, canonical: v })),
    );
  const fallback = close ?? String(p.default ?? p.values[0]);
  return problem('enum-mismatch', `--${flag} must be one of ${p.values.join(', ')}`, {
    flag,
    got: raw,
    expected: describeExpected(def, param),
    hint: close ? `did you mean '--${flag} ${close}'?` : `pick one of ${p.values.join(', ')}`,
    fix: at(fallback),
  });
}
