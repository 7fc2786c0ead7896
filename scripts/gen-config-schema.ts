import { mkdirSync, writeFileSync } from 'node:fs';
import { configJsonSchema } from '../src/config/json-schema.js';

mkdirSync(new URL('../schemas/', import.meta.url), { recursive: true });
writeFileSync(
  new URL('../schemas/config.schema.json', import.meta.url),
  `${JSON.stringify(configJsonSchema(), null, 2)}\n`,
);
