/** JSON Schema of the configuration's shape, shipped as schemas/config.schema.json for editors. */
import { z } from 'zod';
import { configSchema } from './schema.js';

/**
 * The shape only: what needs the file system (secrets present, images and manifests
 * hashed, CLIs runnable) is checked by loadConfig, not expressible here.
 */
export function configJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return { ...schema, title: 'clibroker operator configuration' };
}
