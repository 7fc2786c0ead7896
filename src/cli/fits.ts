/**
 * The CLI's fast path past zod: when every parsed value already fits its parameter (plain
 * strings, numbers, booleans, enums and arrays of them, within their limits), the values
 * with defaults applied are the validated input, and zod is never loaded. A free-form JSON
 * object (a parameter of type object with no declared fields) fits as it is. Anything else —
 * a JSON object with declared fields, a missing required value, a value over a limit — goes to the zod schema
 * (`validate.ts`), which also explains what does not fit. Loading zod costs more than the
 * rest of a thin command's start (`clibroker run` measured about 130 ms with it against
 * 55 ms for `--help` on a shared two-core machine).
 */
import { isRequired, surfaceParams } from './define.js';
import type { AnyTool, ValueSpec } from './types.js';

function fits(s: ValueSpec, v: unknown): boolean {
  switch (s.type) {
    case 'string':
      return typeof v === 'string' && (s.maxBytes === undefined || Buffer.byteLength(v) <= s.maxBytes);
    case 'number':
      return (
        typeof v === 'number' &&
        Number.isFinite(v) &&
        (!s.integer || Number.isInteger(v)) &&
        (s.min === undefined || v >= s.min) &&
        (s.max === undefined || v <= s.max)
      );
    case 'boolean':
      return typeof v === 'boolean';
    case 'enum':
      return typeof v === 'string' && s.values.includes(v);
    case 'array':
      return (
        Array.isArray(v) &&
        (s.maxItems === undefined || v.length <= s.maxItems) &&
        v.every((x) => fits(s.items, x))
      );
    case 'object':
      // an object with fields has nested shapes: the schema decides; a free-form JSON object
      // (the schema's record of unknowns) fits as it is when the schema would copy it whole
      return s.properties === undefined && plainRecord(v);
    default:
      return false;
  }
}

/**
 * A JSON object the schema's record takes and copies unchanged: a plain object whose own keys
 * are enumerable strings other than `__proto__` (which the schema drops).
 */
function plainRecord(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  if (Object.getPrototypeOf(v) !== Object.prototype) return false;
  for (const k of Reflect.ownKeys(v))
    if (typeof k !== 'string' || k === '__proto__' || !Object.prototype.propertyIsEnumerable.call(v, k))
      return false;
  return true;
}

const primitive = (v: unknown): boolean => v === null || typeof v !== 'object';

/** The CLI input as validated, or undefined when the zod schema must look at it. */
export function fitsAsIs(
  def: AnyTool,
  values: Readonly<Record<string, unknown>>,
): Record<string, unknown> | undefined {
  const params = surfaceParams(def, 'cli');
  if (Object.keys(values).some((k) => !params.some(([name]) => name === k))) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, p] of params) {
    const v = values[k];
    if (v === undefined) {
      if (p.default !== undefined) {
        if (!primitive(p.default)) return undefined;
        out[k] = p.default;
      } else if (isRequired(p)) return undefined;
      continue;
    }
    if (!fits(p, v)) return undefined;
    out[k] = v;
  }
  return out;
}
