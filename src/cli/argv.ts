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
 */
import { fileAlternative, flagKind, flagName, positionalParam, type FlagKind } from './define.js';
import { echo, fail } from './envelope.js';
import { parseJsonParam } from './json-param.js';
import { describeExpected, exampleValue, flagCandidates, flagList } from './flags.js';
import { suggest } from './suggest.js';
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

type Entry =
  | { kind: FlagKind; param: string; p: ParamDef; negated?: boolean }
  | { kind: 'file'; param: string; p: ParamDef; alt: FileInputAlternative };

const BOOL_WORDS: Readonly<Record<string, boolean>> = {
  true: true,
  yes: true,
  '1': true,
  false: false,
  no: false,
  '0': false,
};
const NUMBER_RE = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

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
 * Typographic dashes that word processors and chat front ends put where `--` was typed
 * (hyphen, non-breaking hyphen, figure dash, en dash, em dash, horizontal bar, minus sign,
 * small and full-width hyphen-minus).
 */
const TYPO_DASHES = /^[\u2010-\u2015\u2212\uFE58\uFE63\uFF0D]+/;

function lookup(def: AnyTool, name: string): Entry | undefined {
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
function flagOf(def: AnyTool, word: string): Entry | undefined {
  if (!word.startsWith('--') || word === '--') return undefined;
  const eq = word.indexOf('=');
  return lookup(def, word.slice(2, eq < 0 ? undefined : eq));
}

/** How many words a flag occupies starting at `i` (the flag, and its value when separate). */
function span(def: AnyTool, argv: readonly string[], i: number): number {
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
function vendorFix(def: AnyTool, argv: readonly string[], i: number): string[] {
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
function splitWord(def: AnyTool, tok: string): string[] | undefined {
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

const replace = (argv: readonly string[], at: number, count: number, words: readonly string[]): string[] => [
  ...argv.slice(0, at),
  ...words,
  ...argv.slice(at + count),
];

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

/**
 * One scalar value. `at(v)` is the argv with this value replaced by `v`.
 * @throws CliFailure flag-parse (number), enum-mismatch
 */
function scalar(def: AnyTool, param: string, p: ParamDef, raw: string, at: (v: string) => string[]): unknown {
  const flag = flagName(param);
  if (p.type === 'number') {
    const n = Number(raw);
    if (!NUMBER_RE.test(raw) || !Number.isFinite(n) || (p.integer && !Number.isInteger(n))) {
      fail('flag-parse', `--${flag} takes ${p.integer ? 'an integer' : 'a number'}`, {
        flag,
        got: raw,
        expected: describeExpected(def, param),
        fix: at(String(likelyNumber(def, param, p, raw))),
      });
    }
    if ((p.min !== undefined && n < p.min) || (p.max !== undefined && n > p.max)) {
      const nearest = String(likelyNumber(def, param, p, raw));
      fail('flag-parse', `--${flag} must be ${range(p)}`, {
        flag,
        got: raw,
        expected: `--${flag} ${nearest} (${range(p)})`,
        hint: `retry uses ${nearest}, the nearest allowed value`,
        fix: at(nearest),
      });
    }
    return n;
  }
  if (p.type === 'enum') {
    if (!p.values.includes(raw)) {
      const close =
        p.values.find((v) => v.toLowerCase() === raw.toLowerCase()) ??
        suggest(
          raw,
          p.values.map((v) => ({ name: v, canonical: v })),
        );
      const fallback = close ?? String(p.default ?? p.values[0]);
      fail('enum-mismatch', `--${flag} must be one of ${p.values.join(', ')}`, {
        flag,
        got: raw,
        expected: describeExpected(def, param),
        hint: close ? `did you mean '--${flag} ${close}'?` : `pick one of ${p.values.join(', ')}`,
        fix: at(fallback),
      });
    }
    return raw;
  }
  if (p.type === 'array')
    return scalar(def, param, { ...p.items, describe: p.describe } as ParamDef, raw, at);
  return raw;
}

/** The words of `--flag <value>` for a value the agent never gave: the definition's example value. */
function filledValue(def: AnyTool, param: string, flag: string): string[] | undefined {
  const v = exampleValue(def, param);
  if (v === undefined) return undefined;
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.startsWith('--') ? [`--${flag}=${s}`] : [`--${flag}`, s];
}

/**
 * Parse the arguments after the command path into parameter values.
 * @throws CliFailure (flag-parse, json-parse, enum-mismatch, unknown-flag)
 */
export function parseArgv(def: AnyTool, argv: readonly string[]): ParsedArgv {
  const out: ParsedArgv = { values: {}, files: [], help: false };
  if (wantsHelp(argv)) return { ...out, help: true };
  const seen = new Map<string, { key: string; at: number; words: number }>();
  const restParam = Object.entries(def.parameters).find(([, p]) => p.cliRest)?.[0];
  const positional = positionalParam(def);
  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i]!;
    if (tok === '--') {
      if (!restParam) {
        // Dropping the `--` helps when our own flags follow it (or nothing does). Before a
        // word that is no flag of ours it would leave the same mistake, and dropping that word
        // too would drop what the agent wrote: no retry then.
        const next = argv[i + 1];
        const droppable = next === undefined || flagOf(def, next) !== undefined;
        fail('flag-parse', 'this command takes no arguments after --', {
          got: argv.slice(i + 1).join(' '),
          hint: droppable
            ? 'every value belongs to a --flag; retry drops the --'
            : 'every value belongs to a --flag: give each word after -- to its flag',
          ...(droppable ? { fix: replace(argv, i, 1, []) } : {}),
        });
      }
      out.values[restParam] = argv.slice(i + 1);
      break;
    }
    const typo = TYPO_DASHES.exec(tok)?.[0];
    if (typo !== undefined) {
      // `—method` or a lone `—`: a flag (or the separator) whose dashes were typeset
      const fixed = `--${tok.slice(typo.length).replace(/^-+/, '')}`;
      fail(
        fixed === '--' ? 'flag-parse' : 'unknown-flag',
        `'${echo(tok, 60)}' starts with a typographic dash, not two ASCII hyphens`,
        {
          ...(fixed === '--' ? {} : { flag: echo(fixed.slice(2), 60) }),
          got: echo(tok, 60),
          hint: `flags start with -- (ASCII hyphens); retry writes ${echo(fixed.split('=')[0]!, 60)}`,
          fix: replace(argv, i, 1, [fixed]),
        },
      );
    }
    if (tok === 'help' && !restParam) return { ...out, help: true };
    if (tok === '\\' || tok === '\\n') {
      // a line continuation or a `\n` the shell never saw: no value of ours, no vendor word
      fail('flag-parse', `unexpected argument '${tok}'`, {
        got: tok,
        hint: `a leftover ${tok === '\\' ? 'line continuation' : 'literal \\n'}; retry drops it`,
        fix: replace(argv, i, 1, []),
      });
    }
    if (positional && !tok.startsWith('-') && !seen.has(positional)) {
      // the one bare word the command takes (`run gh_cli`); a second is a stray word below
      out.values[positional] = scalar(def, positional, def.parameters[positional]!, tok, (v) =>
        replace(argv, i, 1, [v]),
      );
      seen.set(positional, { key: flagName(positional), at: i, words: 1 });
      continue;
    }
    if (!tok.startsWith('-') || tok === '-') {
      fail('flag-parse', `unexpected argument '${echo(tok, 60)}'`, {
        got: tok,
        hint: restParam
          ? "the vendor CLI's arguments go after --: retry moves them there"
          : 'every value belongs to a --flag',
        ...(restParam ? { fix: vendorFix(def, argv, i) } : {}),
      });
    }
    const eq = tok.indexOf('=');
    const name = tok.replace(/^--?/, '').slice(0, eq < 0 ? undefined : eq - (tok.startsWith('--') ? 2 : 1));
    const inline = eq < 0 ? undefined : tok.slice(eq + 1);
    const e = tok.startsWith('--') ? lookup(def, name) : undefined;
    const split = e ? undefined : splitWord(def, tok);
    if (split) {
      fail('unknown-flag', `unknown flag ${echo(tok, 60)}: a flag and its value in one word`, {
        flag: echo(split[0]!.slice(2).split('=')[0]!, 60),
        got: echo(tok, 60),
        expected: flagList(def),
        hint: `the shell passed them as one argument (quoted together); give them as separate words: ${echo(split.join(' '), 120)}`,
        fix: replace(argv, i, 1, split),
      });
    }
    if (!e) {
      const close = suggest(name, flagCandidates(def));
      const dash = tok.startsWith('--') ? '--' : '-';
      const hint = close
        ? `did you mean --${close}?`
        : restParam
          ? `if ${dash}${echo(name, 60)} is the vendor CLI's flag, it goes after --: retry moves it there`
          : undefined;
      const fix = close
        ? replace(argv, i, 1, [inline === undefined ? `--${close}` : `--${close}=${inline}`])
        : restParam
          ? vendorFix(def, argv, i)
          : undefined;
      fail('unknown-flag', `unknown flag ${dash}${echo(name, 60)}`, {
        // named as typed: `-m` is not `--m`, and an agent looks for the word it wrote
        flag: dash === '-' ? `-${name}` : name,
        // the flag, not its inline value: `--connection={…}` may carry a secret
        got: inline === undefined ? tok : `${tok.slice(0, eq)}=…`,
        expected: flagList(def),
        ...(hint ? { hint } : {}),
        ...(fix ? { fix } : {}),
      });
    }
    const key = e.kind === 'file' ? e.alt.fileFlag : flagName(e.param);
    const start = i;
    const takeValue = (): string => {
      if (inline !== undefined) return inline;
      const next = argv[i + 1];
      const nextIsFlag =
        next !== undefined && (next === '--' || next === '--help' || flagOf(def, next) !== undefined);
      if (next === undefined || nextIsFlag) {
        // A forgotten value: the next word is a flag in its own right (or there is none).
        // Offer the example's value; never `--key=--next`, which would swallow the next flag.
        const filled =
          e.kind === 'file' ? filledValue(def, e.param, flagName(e.param)) : filledValue(def, e.param, key);
        fail(
          'flag-parse',
          `--${key} needs a value${next === undefined ? '' : `, but the next word ${echo(next, 60)} is ${next === '--' ? 'the start of the vendor arguments' : 'a flag of this command'}`}`,
          {
            flag: key,
            ...(next === undefined ? {} : { got: next }),
            expected: describeExpected(def, e.param, e.kind === 'file'),
            hint: filled
              ? `give --${key} a value; retry uses the example's: ${filled.join(' ')}`
              : `give --${key} a value`,
            ...(filled ? { fix: replace(argv, i, 1, filled) } : {}),
          },
        );
      }
      if (next.startsWith('--')) {
        // not one of our flags: most likely a value that itself starts with --
        fail('flag-parse', `--${key} needs a value; ${echo(next, 60)} is not a flag of this command`, {
          flag: key,
          got: next,
          expected: describeExpected(def, e.param, e.kind === 'file'),
          hint: `a value that starts with -- is written --${key}=${echo(next, 60)}`,
          fix: replace(argv, i, 2, [`--${key}=${next}`]),
        });
      }
      i++;
      return next;
    };
    // argv with the value of this flag replaced by `v` (inline or the next word)
    const at = (v: string): string[] =>
      inline !== undefined
        ? replace(argv, start, 1, [`${tok.slice(0, eq)}=${v}`])
        : replace(argv, start + 1, 1, [v]);
    if (e.kind !== 'repeat' && seen.has(e.param)) {
      const first = seen.get(e.param)!;
      // Given twice, the last one is kept. Given directly and through its file flag, the
      // direct value is kept: it is in the command line, where a file may not exist.
      const dropCurrent = first.key !== key && e.kind === 'file';
      fail(
        'flag-parse',
        first.key === key
          ? `--${key} given more than once`
          : `give either --${first.key} or --${key}, not both`,
        {
          flag: first.key === key ? key : `${first.key},${key}`,
          hint: `retry keeps --${dropCurrent ? first.key : key}${first.key === key ? ', the last one' : ', the value on the command line'}`,
          fix: dropCurrent
            ? replace(argv, start, span(def, argv, start), [])
            : replace(argv, first.at, first.words, []),
        },
      );
    }
    if (e.kind === 'boolean') {
      const canon = flagName(e.param);
      if (e.negated) {
        if (inline !== undefined) {
          const b = BOOL_WORDS[inline.toLowerCase()];
          fail('flag-parse', `--no-${canon} takes no value`, {
            flag: canon,
            got: tok,
            expected: `--${canon} or --no-${canon}`,
            fix: replace(argv, i, 1, [b === false ? `--${canon}` : `--no-${canon}`]),
          });
        }
        out.values[e.param] = false;
      } else {
        const word = inline ?? argv[i + 1];
        const b = word === undefined ? undefined : BOOL_WORDS[word.toLowerCase()];
        if (inline !== undefined && b === undefined) {
          fail('flag-parse', `--${canon} takes true|false|yes|no|1|0`, {
            flag: canon,
            got: inline,
            expected: `--${canon} or --no-${canon}`,
            fix: replace(argv, i, 1, [`--${canon}`]),
          });
        }
        if (inline === undefined && b !== undefined) i++;
        out.values[e.param] = b ?? true;
      }
    } else if (e.kind === 'file') {
      const path = takeValue();
      out.files.push({
        param: e.param,
        flag: key,
        path,
        parseAs: e.alt.parseAs,
        at: start,
        words: i - start + 1,
      });
    } else if (e.kind === 'json') {
      const raw = takeValue();
      const words = i - start + 1;
      const alt = fileAlternative(def, e.param);
      // a path given where the JSON goes: the same path, to the -file flag
      const toFile = alt && ((path: string) => replace(argv, start, words, [`--${alt.fileFlag}`, path]));
      out.values[e.param] = parseJsonParam(def, e.param, key, raw, at, toFile);
    } else if (e.kind === 'repeat') {
      const list = (out.values[e.param] as unknown[] | undefined) ?? [];
      list.push(scalar(def, e.param, e.p, takeValue(), at));
      out.values[e.param] = list;
    } else {
      out.values[e.param] = scalar(def, e.param, e.p, takeValue(), at);
    }
    seen.set(e.param, { key, at: start, words: i - start + 1 });
  }
  return out;
}
