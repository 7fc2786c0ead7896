/**
 * S5: a fresh process that starts a broker and makes one request through it. Prints, in ms
 * since the process started (performance.timeOrigin), when user code began (after node boot
 * and module loading), when the broker was listening, and when the first response ended.
 */
import { readFileSync } from 'node:fs';
import { createBroker } from '../../src/broker/broker.js';
import { firstGet } from './first-get.js';

const loaded = performance.now();
const [port, caFile] = process.argv.slice(2);
const broker = await createBroker({
  upstream: {
    ca: readFileSync(caFile!, 'utf8'),
    resolve: () => ({ host: '127.0.0.1', port: Number(port) }),
    allowAddresses: ['127.0.0.0/8'],
  },
});
const session = broker.openSession({ egress: ['api.bench.example'], tier: 'write' });
const ready = performance.now();
const u = new URL(session.proxyUrl);
const auth = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
await firstGet({ port: broker.port, caPem: session.caCertPem, proxyAuth: auth });
process.stdout.write(`${JSON.stringify({ loaded, ready, response: performance.now() })}\n`);
process.exit(0);
