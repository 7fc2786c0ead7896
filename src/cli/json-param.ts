/**
 * JSON-valued parameters (objects, arrays of objects): one JSON argument, a single object
 * normalised to a one-element array, and only the top-level shape checked here (the
 * entries are the schema's business).
 *
 * A syntax error is reported by what is wrong and where (json-diagnose.ts), never by
 * JSON.parse's message, which quotes the input. When a lenient reading of the text has the
 * right shape, the failure carries it as strict JSON so the corrected command can be offered.
 */
import { looksLikeSecret } from '../audit/secret-shape.js';
import { echo, fail } from './envelope.js';
import { fileAlternative } from './define.js';
import { describeExpected } from './flags.js';
import { diagnoseJson } from './json-diagnose.js';
import type { AnyTool } from './types.js';

/** Why a parsed value has the wrong top-level shape for `param`, or undefined when it fits. */
function shapeProblem(def: AnyTool, param: string, v: unknown): string | undefined {
  const p = def.parameters[param]!;
  const isObject = typeof v === 'object' && v !== null && !Array.isArray(v);
  if (p.type === 'array') {
    if (Array.isArray(v) || (isObject && p.items.type === 'object')) return undefined;
    return `takes a JSON array${p.items.type === 'object' ? ' of objects (or one object)' : ''}`;
  }
  if (p.type === 'object' && !isObject) return 'takes a JSON object';
  return undefined;
}

function shaped(def: AnyTool, param: string, v: unknown): unknown {
  const p = def.parameters[param]!;
  if (p.type === 'array' && !Array.isArray(v)) return [v];
  return v;
}

// A word that reads as a file path, never as JSON: `./payload.json`, `/tmp/o.json`, `~/a.json`,
// `payload.json`, and curl's `@payload.json`. It needs a `/` or an extension, so a bare word
// (`abc`, an unquoted string) is still reported as what it is.
const PATH_RE = /^@?(?=[^\s]*(?:\/|\.[A-Za-z0-9]{1,8}$))(?:~|\.{1,2})?\/?(?:[\w.@+-]+\/)*[\w.@+-]+$/;

/** The path a JSON flag's value names when it is one (`@` dropped), else undefined. */
export function pathLike(raw: string): string | undefined {
  return PATH_RE.test(raw) ? raw.replace(/^@/, '') : undefined;
}

/**
 * Parse and shape-check the JSON for `param`, given through flag `flag` (the direct flag or
 * its `-file` alternative). `fix` turns strict JSON for the parameter into the corrected
 * argv words, when the caller can place them; `toFile` turns a path into the words that pass
 * it to the parameter's `-file` flag, when the value came through the direct flag.
 * @throws CliFailure json-parse
 */
export function parseJsonParam(
  def: AnyTool,
  param: string,
  flag: string,
  raw: string,
  fix?: (json: string) => string[],
  toFile?: (path: string) => string[],
): unknown {
  const expected = describeExpected(def, param);
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    const alt = fileAlternative(def, param);
    const path = alt && flag !== alt.fileFlag ? pathLike(raw) : undefined;
    if (alt && path !== undefined) {
      // the agent named the file the JSON is in: that is what the -file flag is for
      fail('json-parse', `--${flag} takes the JSON itself, and ${echo(raw, 60)} looks like a file path`, {
        flag,
        got: raw,
        expected: describeExpected(def, param, true),
        hint: `a file's JSON goes in --${alt.fileFlag} <path|->${toFile ? ' (retry does that)' : ''}`,
        ...(toFile ? { fix: toFile(path) } : {}),
      });
    }
    const d = diagnoseJson(raw);
    const where = d ? ` at line ${d.line}, column ${d.column}` : '';
    // A fragment of a secret is too short to be recognised as one: text holding a secret
    // gets its position only.
    const near = d && d.near !== '' && !looksLikeSecret(raw) ? ` (at ${JSON.stringify(d.near)})` : '';
    const repaired =
      d?.repaired !== undefined && shapeProblem(def, param, JSON.parse(d.repaired)) === undefined
        ? d.repaired
        : undefined;
    const empty = raw.trim() === '';
    fail(
      'json-parse',
      `--${flag} is not valid JSON: ${empty ? 'it is empty' : echo(d?.problem ?? 'it does not parse')}${empty ? '' : where}${near}`,
      {
        flag,
        got: raw,
        expected,
        hint: repaired
          ? 'retry holds the same JSON written strictly (double-quoted keys and strings, no trailing commas); check it and run it'
          : `write it as strict JSON in one single-quoted argument, shaped like: ${expected}`,
        ...(repaired && fix ? { fix: fix(repaired) } : {}),
      },
    );
  }
  const problem = shapeProblem(def, param, v);
  if (problem) {
    // An array of exactly one object where an object is wanted, or the JSON encoded twice
    // (a JSON string holding the JSON): the corrected command carries what is inside.
    let inner: unknown;
    if (Array.isArray(v) && v.length === 1) inner = v[0];
    else if (typeof v === 'string') {
      try {
        inner = JSON.parse(v);
      } catch {
        inner = undefined;
      }
    }
    const unwrapped =
      inner !== undefined && shapeProblem(def, param, inner) === undefined
        ? JSON.stringify(inner)
        : undefined;
    fail('json-parse', `--${flag} ${problem}`, {
      flag,
      got: raw,
      expected,
      hint: `pass it shaped like: ${expected}`,
      ...(unwrapped && fix ? { fix: fix(unwrapped) } : {}),
    });
  }
  return shaped(def, param, v);
}
