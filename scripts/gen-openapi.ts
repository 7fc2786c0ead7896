import { mkdirSync, writeFileSync } from 'node:fs';
import { OPENAPI } from '../src/serve/openapi.js';

mkdirSync(new URL('../schemas/', import.meta.url), { recursive: true });
writeFileSync(new URL('../schemas/openapi.json', import.meta.url), `${JSON.stringify(OPENAPI, null, 2)}\n`);
