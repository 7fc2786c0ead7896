/**
 * clibroker in its own process: createBroker with the bench upstream's CA and a resolver that
 * maps every name to it, and one session at tier write whose egress lists every bench host.
 * The request budget is lifted for the bench (S2 sends tens of thousands of requests; the
 * default 128 would refuse them after the first 128) — the budget check itself still runs.
 */
import { readFileSync } from 'node:fs';
import { createBroker } from '../../src/broker/broker.js';
import { arg, serveIpc } from '../lib/child-ipc.js';

const upstreamPort = Number(arg('upstream-port'));
const broker = await createBroker({
  upstream: {
    ca: readFileSync(arg('upstream-ca'), 'utf8'),
    resolve: () => ({ host: '127.0.0.1', port: upstreamPort }),
    allowAddresses: ['127.0.0.0/8'],
  },
});
const session = broker.openSession({
  egress: JSON.parse(readFileSync(arg('hosts'), 'utf8')) as string[],
  tier: 'write',
  limits: { maxRequests: Number.MAX_SAFE_INTEGER },
});
const u = new URL(session.proxyUrl);
serveIpc(
  {
    port: broker.port,
    caPem: session.caCertPem,
    auth: `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`,
  },
  () => broker.close(),
);
