/** JSON Schema of the manifest's shape, for editors and hosts in other languages. */
import { zod } from '../policy/zod.js';
import { manifestSchemas } from './schema.js';

/**
 * The shape only: the limits and cross-field rules of docs/manifest.md are enforced by
 * parseExtensionManifest, not expressible here.
 */
export function extensionJsonSchema(): Record<string, unknown> {
  const { z } = zod();
  const { cliSchema, extensionSchema } = manifestSchemas();
  const full = extensionSchema.extend({ clis: z.array(cliSchema) });
  return z.toJSONSchema(full, { unrepresentable: 'any' }) as Record<string, unknown>;
}
