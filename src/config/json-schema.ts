/** JSON Schema of the configuration's shape, shipped as schemas/config.schema.json for editors. */
import { zod } from '../policy/zod.js';
import { configSchemas } from './schema.js';

/**
 * The shape only: what needs the file system (secrets present, images and manifests
 * hashed, CLIs runnable) is checked by loadConfig, not expressible here.
 */
export function configJsonSchema(): Record<string, unknown> {
  const schema = zod().z.toJSONSchema(configSchemas().configSchema, {
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return { ...schema, title: 'clibroker operator configuration' };
}
