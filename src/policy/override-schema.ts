/**
 * The shape of a `wirePolicy.overrides` entry as a zod 4 schema, for the manifest module
 * to reuse. "Constrains at least one field" and "at most 256" are manifest rules with
 * their own reason codes, so they are not folded in here.
 */
import type { z } from 'zod';
import { once, zod } from './zod.js';

/** HTTP token characters (RFC 9110 §5.6.2), upper case as methods are sent. */
const METHOD = /^[A-Z][A-Z0-9!#$%&'*+.^_`|~-]*$/;
const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/**
 * Why a path pattern is refused, or undefined when it is fine: it must start with `/`, have
 * no empty, `.` or `..` segment, no `?`, `#`, `%` or backslash, and use `*` only as a whole segment.
 */
export function pathPatternProblem(p: string): string | undefined {
  if (!p.startsWith('/')) return 'must start with /';
  if (p.length > 1024) return 'at most 1024 characters';
  if (/[?#%\\\s]/.test(p)) return 'no ?, #, %, backslash or whitespace';
  for (const seg of p.slice(1).split('/')) {
    if (seg === '') return 'no empty segment (// or a trailing /)';
    if (seg === '.' || seg === '..') return 'no . or .. segment';
    if (seg.includes('*') && seg !== '*') return '* matches a whole segment only';
  }
  return undefined;
}

/** The zod schema of one wire override, as `wireOverrideSchema()` returns it. */
export type WireOverrideSchema = z.ZodObject<
  {
    match: z.ZodObject<
      {
        method: z.ZodOptional<z.ZodString>;
        pathPattern: z.ZodOptional<z.ZodString>;
        graphqlOperation: z.ZodOptional<z.ZodString>;
      },
      z.core.$strict
    >;
    wireClass: z.ZodEnum<{ read: 'read'; write: 'write'; destructive: 'destructive' }>;
  },
  z.core.$strict
>;

function buildWireOverrideSchema(z: typeof import('zod').z): WireOverrideSchema {
  return z.strictObject({
    match: z.strictObject({
      method: z.string().regex(METHOD, 'an upper-case HTTP method').optional(),
      pathPattern: z
        .string()
        .refine((p) => pathPatternProblem(p) === undefined, {
          error: (iss) => pathPatternProblem(String(iss.input)) ?? 'invalid path pattern',
        })
        .optional(),
      graphqlOperation: z.string().regex(GRAPHQL_NAME, 'a GraphQL root field name').optional(),
    }),
    wireClass: z.enum(['read', 'write', 'destructive']),
  });
}

/**
 * The zod schema of one wire override of a manifest, built on the first call (zod is loaded
 * then, not when the policy module is imported).
 */
export const wireOverrideSchema: () => WireOverrideSchema = once(() => buildWireOverrideSchema(zod().z));

/** Type-level twin of `WireOverride` in types.ts (a test keeps them equal). */
export type WireOverrideInput = z.infer<WireOverrideSchema>;
