/**
 * JSON-valued parameters (objects, arrays of objects): one JSON argument, a single object
 * normalised to a one-element array, and only the top-level shape checked here (the
 * entries are the schema's business, issue 6).
 */
import { fail } from './envelope.js';
import { fileAlternative } from './define.js';
import { describeExpected } from './flags.js';
import type { AnyTool } from './types.js';

/**
 * Parse and shape-check the JSON for `param`, given through flag `flag` (the direct flag or
 * its `-file` alternative).
 * @throws CliFailure json-parse
 */
export function parseJsonParam(def: AnyTool, param: string, flag: string, raw: string): unknown {
  const p = def.parameters[param]!;
  const alt = fileAlternative(def, param);
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch (e) {
    fail('json-parse', `--${flag} is not valid JSON: ${(e as Error).message}`, {
      flag,
      got: raw,
      expected: describeExpected(def, param),
      hint: `pass the JSON as one single-quoted argument${alt && alt.fileFlag !== flag ? `, or put it in a file: --${alt.fileFlag} <path|->` : ''}`,
    });
  }
  if (p.type !== 'array' && p.type !== 'object') return v; // scalars: the schema checks them
  const isObject = typeof v === 'object' && v !== null && !Array.isArray(v);
  if (p.type === 'array') {
    if (isObject && p.items.type === 'object') return [v];
    if (Array.isArray(v)) return v;
    fail('json-parse', `--${flag} takes a JSON array${p.items.type === 'object' ? ' of objects (or one object)' : ''}`, {
      flag,
      got: raw,
      expected: describeExpected(def, param),
    });
  }
  if (!isObject) {
    fail('json-parse', `--${flag} takes a JSON object`, { flag, got: raw, expected: describeExpected(def, param) });
  }
  return v;
}
