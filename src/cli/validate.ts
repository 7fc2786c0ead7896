/**
 * zod (v4) validation shared by the gadget and the CLI. The schema is built from the
 * definition per surface, parsed with `reportInput` so the offending value can go into
 * `got`, and the first (most actionable) issue becomes the envelope error. This module is
 * imported lazily by the CLI, and zod itself is loaded on the first validation, so
 * `clibroker --help` never pays for loading zod.
 */
import type { z } from 'zod';
import { zod } from '../policy/zod.js';
import { describeExpected, gadgetExpected } from './flags.js';
import { flagName, isRequired, surfaceParams } from './define.js';
import { echo, fail } from './envelope.js';
import { suggest, plain } from './suggest.js';
import type { AnyTool, EnvelopeError, ErrorType, FieldSpec, ParamDef, ValueSpec } from './types.js';

function valueSchema(s: ValueSpec): z.ZodType {
  const z = zod().z;
  switch (s.type) {
    case 'string': {
      const max = s.maxBytes;
      return max === undefined
        ? z.string()
        : z.string().refine((v) => Buffer.byteLength(v) <= max, `longer than ${bytes(max)} (UTF-8)`);
    }
    case 'number': {
      let n = s.integer ? z.number().int() : z.number();
      if (s.min !== undefined) n = n.min(s.min);
      if (s.max !== undefined) n = n.max(s.max);
      return n;
    }
    case 'boolean':
      return z.boolean();
    case 'enum':
      return z.enum(s.values as [string, ...string[]]);
    case 'array':
      return s.maxItems === undefined
        ? z.array(valueSchema(s.items))
        : z.array(valueSchema(s.items)).max(s.maxItems);
    case 'object':
      if (!s.properties) return z.record(z.string(), z.unknown());
      return z.looseObject(Object.fromEntries(Object.entries(s.properties).map(([k, f]) => [k, field(f)])));
  }
}

/** `32 KiB`, `1 MiB`, `100 bytes`. */
export function bytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

function field(f: FieldSpec): z.ZodType {
  const v = valueSchema(f);
  return f.optional ? v.optional() : v;
}

function paramSchema(p: ParamDef): z.ZodType {
  const v = valueSchema(p);
  if (p.default !== undefined) return v.default(p.default as never);
  return isRequired(p) ? v : v.optional();
}

const cache = new WeakMap<AnyTool, Map<string, z.ZodType>>();

/** The strict object schema of a surface's input (cached per definition). */
export function inputSchema(def: AnyTool, surface: 'cli' | 'gadget'): z.ZodType {
  let m = cache.get(def);
  if (!m) {
    m = new Map();
    cache.set(def, m);
  }
  let s = m.get(surface);
  if (!s) {
    s = zod().z.strictObject(
      Object.fromEntries(surfaceParams(def, surface).map(([k, p]) => [k, paramSchema(p)])),
    );
    m.set(surface, s);
  }
  return s;
}

const RANK: Record<ErrorType, number> = {
  'unknown-flag': 0,
  'missing-required': 1,
  'enum-mismatch': 2,
  'json-parse': 3,
  'flag-parse': 4,
  'unknown-command': 5,
  auth: 6,
  runtime: 7,
};

function pathText(path: readonly PropertyKey[]): string {
  return path
    .map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? String(s) : `.${String(s)}`))
    .join('');
}

function toError(def: AnyTool, surface: 'cli' | 'gadget', issue: z.core.$ZodIssue): EnvelopeError {
  const top = issue.path[0];
  const param = typeof top === 'string' ? top : undefined;
  const name = (p: string) => (surface === 'cli' ? flagName(p) : p);
  const flag =
    param === undefined
      ? undefined
      : issue.path.length > 1 && surface === 'gadget'
        ? pathText(issue.path)
        : name(param);
  const expected =
    param && def.parameters[param]
      ? surface === 'cli'
        ? describeExpected(def, param)
        : gadgetExpected(def, param)
      : undefined;
  const got =
    'input' in issue && issue.input !== undefined
      ? echo(JSON.stringify(issue.input) ?? String(issue.input))
      : undefined;
  const at = issue.path.length > 1 ? ` at ${pathText(issue.path)}` : '';
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]!;
    const close = suggest(key, plain(surfaceParams(def, surface).map(([k]) => k)));
    return {
      type: 'unknown-flag',
      flag: issue.keys.join(','),
      message: `unknown input ${issue.keys.map((k) => `'${echo(k, 60)}'`).join(', ')}`,
      expected: surfaceParams(def, surface)
        .map(([k]) => k)
        .join(', '),
      ...(close ? { hint: `did you mean '${close}'?` } : {}),
    };
  }
  const base = { ...(flag ? { flag } : {}), ...(got ? { got } : {}), ...(expected ? { expected } : {}) };
  if (issue.code === 'invalid_type' && got === undefined) {
    return {
      type: 'missing-required',
      ...base,
      message: `${param ? `'${name(param)}'` : 'a value'}${at} is required`,
    };
  }
  if (issue.code === 'invalid_value' && issue.path.length === 1) {
    return {
      type: 'enum-mismatch',
      ...base,
      message: `'${name(param ?? '')}' must be one of ${issue.values.join(', ')}`,
    };
  }
  return {
    type: 'flag-parse',
    ...base,
    message: `${param ? `'${name(param)}'${at}` : 'input'}: ${issue.message}`,
  };
}

/**
 * Validate input for a surface: the parsed value with defaults applied.
 * @throws CliFailure carrying the most actionable issue (others counted in the message)
 */
export function validateInput(
  def: AnyTool,
  surface: 'cli' | 'gadget',
  input: unknown,
): Record<string, unknown> {
  const r = inputSchema(def, surface).safeParse(input, { reportInput: true });
  if (r.success) return r.data as Record<string, unknown>;
  const errors = r.error.issues
    .map((i) => toError(def, surface, i))
    .sort((a, b) => RANK[a.type] - RANK[b.type]);
  const first = errors[0]!;
  const more =
    errors.length > 1 ? ` (and ${errors.length - 1} more problem${errors.length > 2 ? 's' : ''})` : '';
  const { type, message, ...rest } = first;
  fail(type, `${message}${more}`, rest);
}
