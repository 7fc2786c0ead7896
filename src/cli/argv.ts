/**
 * The argv tokenizer, driven by a ToolDefinition (no oclif, yargs or commander; issue 6).
 * Long flags and aliases, `--f=value`, natural booleans, negative numbers as values,
 * repeated flags for primitive arrays, one JSON argument for objects and arrays of
 * objects, `--<param>-file <path|->`, and the vendor's arguments after `--`. Files are
 * only recorded here; `inputs.ts` checks the one-stdin rule before reading anything.
 */
import { fileAlternative, flagKind, flagName, type FlagKind } from './define.js';
import { fail } from './envelope.js';
import { parseJsonParam } from './json-param.js';
import { describeExpected, flagCandidates, flagList } from './flags.js';
import { suggest } from './suggest.js';
import type { AnyTool, FileInputAlternative, ParamDef } from './types.js';

/** A `--x-file` argument, read later. */
export interface FileRef {
  param: string;
  /** the file flag without dashes */
  flag: string;
  path: string;
  parseAs: 'json' | 'text';
}

export interface ParsedArgv {
  values: Record<string, unknown>;
  files: FileRef[];
  help: boolean;
}

type Entry =
  | { kind: FlagKind; param: string; p: ParamDef; negated?: boolean }
  | { kind: 'file'; param: string; p: ParamDef; alt: FileInputAlternative };

const BOOL_WORDS: Readonly<Record<string, boolean>> = { true: true, yes: true, '1': true, false: false, no: false, '0': false };
const NUMBER_RE = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

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

function scalar(def: AnyTool, param: string, p: ParamDef, raw: string): unknown {
  const flag = flagName(param);
  if (p.type === 'number') {
    const n = Number(raw);
    if (!NUMBER_RE.test(raw) || !Number.isFinite(n) || (p.integer && !Number.isInteger(n))) {
      fail('flag-parse', `--${flag} takes ${p.integer ? 'an integer' : 'a number'}`, {
        flag,
        got: raw,
        expected: describeExpected(def, param),
      });
    }
    return n;
  }
  if (p.type === 'enum') {
    if (!p.values.includes(raw)) {
      const close = suggest(raw, p.values.map((v) => ({ name: v, canonical: v })));
      fail('enum-mismatch', `--${flag} must be one of ${p.values.join(', ')}`, {
        flag,
        got: raw,
        expected: describeExpected(def, param),
        ...(close ? { hint: `did you mean '--${flag} ${close}'?` } : {}),
      });
    }
    return raw;
  }
  if (p.type === 'array') return scalar(def, param, { ...p.items, describe: p.describe } as ParamDef, raw);
  return raw;
}

/**
 * Parse the arguments after the command path into parameter values.
 * @throws CliFailure (flag-parse, json-parse, enum-mismatch, unknown-flag)
 */
export function parseArgv(def: AnyTool, argv: readonly string[]): ParsedArgv {
  const out: ParsedArgv = { values: {}, files: [], help: false };
  const seen = new Map<string, string>();
  const restParam = Object.entries(def.parameters).find(([, p]) => p.cliRest)?.[0];
  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i]!;
    if (tok === '--') {
      if (!restParam) fail('flag-parse', 'this command takes no arguments after --', { got: argv.slice(i + 1).join(' ') });
      out.values[restParam] = argv.slice(i + 1);
      break;
    }
    if (tok === '--help' || tok === '-h') {
      out.help = true;
      continue;
    }
    if (!tok.startsWith('-') || tok === '-') {
      fail('flag-parse', `unexpected argument '${tok}'`, {
        got: tok,
        hint: restParam ? `put the vendor's arguments after --` : 'every value belongs to a --flag',
      });
    }
    const eq = tok.indexOf('=');
    const name = tok.replace(/^--?/, '').slice(0, eq < 0 ? undefined : eq - (tok.startsWith('--') ? 2 : 1));
    const inline = eq < 0 ? undefined : tok.slice(eq + 1);
    const e = tok.startsWith('--') ? lookup(def, name) : undefined;
    if (!e) {
      const close = suggest(name, flagCandidates(def));
      fail('unknown-flag', `unknown flag ${tok.startsWith('--') ? '--' : '-'}${name}`, {
        flag: name,
        // the flag, not its inline value: `--connection={…}` may carry a secret
        got: inline === undefined ? tok : `${tok.slice(0, eq)}=…`,
        expected: flagList(def),
        ...(close ? { hint: `did you mean --${close}?` } : {}),
      });
    }
    const key = e.kind === 'file' ? e.alt.fileFlag : flagName(e.param);
    const takeValue = (): string => {
      if (inline !== undefined) return inline;
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) {
        fail('flag-parse', `--${key} needs a value`, {
          flag: key,
          ...(next === undefined ? {} : { got: next }),
          expected: describeExpected(def, e.param, e.kind === 'file'),
          ...(next === undefined ? {} : { hint: `a value that starts with -- is written --${key}=${next}` }),
        });
      }
      i++;
      return next;
    };
    if (e.kind !== 'repeat' && seen.has(e.param)) {
      const first = seen.get(e.param)!;
      fail('flag-parse', first === key ? `--${key} given more than once` : `give either --${first} or --${key}, not both`, {
        flag: first === key ? key : `${first},${key}`,
      });
    }
    seen.set(e.param, key);
    if (e.kind === 'boolean') {
      const canon = flagName(e.param);
      if (e.negated) {
        if (inline !== undefined) fail('flag-parse', `--no-${canon} takes no value`, { flag: canon, got: tok });
        out.values[e.param] = false;
        continue;
      }
      const word = inline ?? argv[i + 1];
      const b = word === undefined ? undefined : BOOL_WORDS[word.toLowerCase()];
      if (inline !== undefined && b === undefined) {
        fail('flag-parse', `--${canon} takes true|false|yes|no|1|0`, { flag: canon, got: inline, expected: `--${canon} or --no-${canon}` });
      }
      if (inline === undefined && b !== undefined) i++;
      out.values[e.param] = b ?? true;
    } else if (e.kind === 'file') {
      out.files.push({ param: e.param, flag: key, path: takeValue(), parseAs: e.alt.parseAs });
    } else if (e.kind === 'json') {
      out.values[e.param] = parseJsonParam(def, e.param, key, takeValue());
    } else if (e.kind === 'repeat') {
      const list = (out.values[e.param] as unknown[] | undefined) ?? [];
      list.push(scalar(def, e.param, e.p, takeValue()));
      out.values[e.param] = list;
    } else {
      out.values[e.param] = scalar(def, e.param, e.p, takeValue());
    }
  }
  return out;
}
