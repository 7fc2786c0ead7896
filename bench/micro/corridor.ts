/**
 * The request corridor end to end in one process: a local HTTPS origin, a broker and an undici
 * pool of 8 keep-alive connections through it, GETs without a body. Prints the process's CPU
 * per request, which counts the client and the origin too: compare two builds of the broker
 * with it, never a build against another proxy. Under valgrind the instruction counts repeat
 * on a loaded machine where wall-clock and CPU time do not:
 *
 *   npx esbuild bench/micro/corridor.ts --bundle --platform=node --format=esm \
 *     --packages=external --outfile=bench/.cache/corridor.mjs
 *   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p node bench/.cache/corridor.mjs 300
 *   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p node bench/.cache/corridor.mjs 1300
 *
 * and read (instructions at 1300 − at 300) / 1000 as the instructions per request.
 * Run: `npx tsx bench/micro/corridor.ts [requests]`.
 */
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createBroker } from '../../src/broker/broker.js';
import { createCertificateAuthority } from '../../src/broker/ca.js';
import { get, pool } from '../lib/client.js';

const N = Number(process.argv[2] ?? 2000);
const WARMUP = 200;
const CONNECTIONS = 8;

const ca = createCertificateAuthority({ commonName: 'corridor bench origin CA' });
const leaf = ca.mintLeaf('*.bench.example');
const BODY = Buffer.from(JSON.stringify({ id: 1, name: 'bench', items: [1, 2, 3], ok: true }));
const origin = createServer(
  { key: leaf.keyPem, cert: leaf.certPem, keepAliveTimeout: 120_000 },
  (req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': BODY.length });
    res.end(BODY);
  },
);
await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
const port = (origin.address() as AddressInfo).port;
const broker = await createBroker({
  upstream: { ca: ca.certPem, resolve: () => ({ host: '127.0.0.1', port }), allowAddresses: ['127.0.0.0/8'] },
});
const session = broker.openSession({
  egress: ['api.bench.example'],
  tier: 'write',
  limits: { maxRequests: Number.MAX_SAFE_INTEGER },
});
const u = new URL(session.proxyUrl);
const auth = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
const p = pool(
  { port: broker.port, caPem: session.caCertPem, proxy: true, auth },
  'api.bench.example',
  CONNECTIONS,
);

async function run(n: number): Promise<void> {
  let left = n;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (left-- > 0) await get(p, '/repos/acme/app/issues?per_page=100');
    }),
  );
}

await run(WARMUP);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await run(N);
const cpu = process.cpuUsage(cpu0);
const ms = performance.now() - t0;
console.log(
  JSON.stringify({
    bench: 'corridor',
    requests: N,
    cpuUsPerRequest: Math.round(((cpu.user + cpu.system) / N) * 10) / 10,
    reqPerSec: Math.round((N / ms) * 1000),
  }),
);
await p.destroy();
session.close();
await broker.close();
origin.close();
