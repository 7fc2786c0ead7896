/** S5 baseline: a fresh process that makes one request straight to the upstream (the same built-in client). */
import { readFileSync } from 'node:fs';
import { firstGet } from './first-get.js';

const loaded = performance.now();
const [port, caFile] = process.argv.slice(2);
const ready = performance.now();
await firstGet({ port: Number(port), caPem: readFileSync(caFile!, 'utf8') });
process.stdout.write(`${JSON.stringify({ loaded, ready, response: performance.now() })}\n`);
process.exit(0);
