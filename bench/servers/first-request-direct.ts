/** S5 baseline: a fresh process that makes one request straight to the upstream (same client code). */
import { readFileSync } from 'node:fs';
import { client, get } from '../lib/client.js';

const loaded = performance.now();
const [port, caFile] = process.argv.slice(2);
const ready = performance.now();
await get(
  client({ port: Number(port), caPem: readFileSync(caFile!, 'utf8'), proxy: false }, 'api.bench.example'),
);
process.stdout.write(`${JSON.stringify({ loaded, ready, response: performance.now() })}\n`);
process.exit(0);
