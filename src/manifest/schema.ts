/**
 * The manifest's shape as zod 4 schemas: types, required fields, unknown keys. Limits and
 * cross-field rules are not here: each of those has its own reason code (rules-*.ts), which
 * a zod `.max()` would flatten into one generic message.
 */
import type { z } from 'zod';
import { once, zod } from '../policy/zod.js';
import type { ProblemList } from './problems.js';

function build(z: typeof import('zod').z) {
  const id = z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, 'a lower-case id: [a-z][a-z0-9_-]{0,31}');
  const nonEmpty = z.string().min(1);

  const credentialHostsEntry = z.strictObject({
    hosts: z.array(z.string()),
    scopes: z.array(nonEmpty).optional(),
  });

  const wireOverride = z.strictObject({
    match: z.strictObject({
      method: z
        .string()
        .regex(/^[A-Z]+$/, 'an upper-case HTTP method')
        .optional(),
      pathPattern: z.string().startsWith('/').optional(),
      graphqlOperation: nonEmpty.optional(),
    }),
    wireClass: z.enum(['read', 'write', 'destructive']),
  });

  // the CLI manifest's shape (`defineCli`); the help tree's shape is checked by rules-help.ts
  const cliSchema = z.strictObject({
    id,
    binary: z.strictObject({
      image: id,
      entrypoint: z.string().regex(/^[^\0\s]+$/, 'a program path or name'),
    }),
    credentialEnv: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    endpointEnv: z.string().optional(),
    helpTree: z.unknown().optional(),
    helpCrawl: z.strictObject({ maxDepth: z.number().int().min(1).max(3) }).optional(),
    toolkit: nonEmpty.optional(),
    authScheme: z.enum(['bearer', 'token', 'basic']).optional(),
    credentialHosts: z.array(credentialHostsEntry).optional(),
    bootstrap: z
      .strictObject({
        tokenEndpoint: z.literal('credential.tokenUrl'),
        preamble: z.array(z.string()),
      })
      .optional(),
    wirePolicy: z.strictObject({ overrides: z.array(wireOverride) }).optional(),
  });

  // the extension manifest's shape (`defineExtension`)
  const extensionSchema = z.strictObject({
    id,
    egress: z.array(z.string()),
    toolkits: z.record(nonEmpty, z.strictObject({ credential: nonEmpty })).optional(),
    clis: z.array(z.unknown()),
  });
  return { cliSchema, extensionSchema };
}

/**
 * The CLI manifest's shape (`defineCli`) and the extension manifest's (`defineExtension`),
 * built on the first call: zod is loaded then, not when the manifest module is imported.
 */
export const manifestSchemas: () => ReturnType<typeof build> = once(() => build(zod().z));

/** Run a schema and turn every zod issue into a problem under `prefix`. */
export function shapeProblems(
  schema: z.ZodType,
  input: unknown,
  prefix: readonly (string | number)[],
  out: ProblemList,
): void {
  const r = schema.safeParse(input);
  if (r.success) return;
  for (const issue of r.error.issues) {
    const path = [...prefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys)
        out.add('MANIFEST_FIELD_UNKNOWN', [...path, k], 'only the fields documented in docs/manifest.md');
      continue;
    }
    out.add('MANIFEST_FIELD_INVALID', path, issue.message, valueAt(input, issue.path));
  }
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = root;
  for (const p of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}
