/**
 * S4: a new connection each time — CONNECT, both TLS handshakes, one GET — cycling over the
 * host names of a normal egress list (15 names plus api.bench.example: 16 hosts, so one leaf
 * names them all and the session builds its context when it opens). Sequential, bounded by
 * count and time. What minting a leaf per host costs is bench/micro/cert-mint.ts's figure.
 */
import { client, get } from '../lib/client.js';
import { quantile } from '../lib/stats.js';
import type { Scenario } from './types.js';

export const S4_MAX = 300;
const WARMUP = 8;
/** with api.bench.example: a 16-host egress list */
const NAMES = 15;
const BUDGET_MS = 5000;
const MIN = 10;

/** Every host S4 uses, all in clibroker's egress list. */
export function s4Hosts(): string[] {
  return Array.from({ length: NAMES }, (_, i) => `h${i}.bench.example`);
}

const host = (i: number): string => `h${i % NAMES}.bench.example`;

async function cold(route: Parameters<typeof client>[0], host: string): Promise<number> {
  const t = performance.now();
  const c = client(route, host);
  try {
    await get(c);
    return performance.now() - t;
  } finally {
    await c.destroy();
  }
}

export const s4: Scenario = {
  id: 'S4',
  title: 'a new connection per request over a 16-host egress list',
  metrics: [
    {
      key: 'p50Ms',
      label: 'cold connection p50',
      unit: 'ms',
      digits: 2,
      goal: { on: 'value', op: '<=', target: 4 },
    },
    {
      key: 'cpuMsPerConn',
      label: 'proxy CPU per cold connection',
      unit: 'ms',
      digits: 2,
      goal: { on: 'ratio', vs: 'nginx', op: '<=', target: 2 },
      proxyOnly: true,
    },
  ],
  async run(path) {
    for (let i = 0; i < WARMUP; i++) await cold(path.route, host(i));
    const samples: number[] = [];
    const cpu0 = await path.cpuMicros?.();
    const until = performance.now() + BUDGET_MS;
    for (let i = 0; i < S4_MAX && (i < MIN || performance.now() < until); i++)
      samples.push(await cold(path.route, host(i)));
    const cpu1 = await path.cpuMicros?.();
    const out: Record<string, number> = {
      p50Ms: quantile(samples, 0.5),
      p90Ms: quantile(samples, 0.9),
      connections: samples.length,
    };
    if (cpu0 !== undefined && cpu1 !== undefined) out.cpuMsPerConn = (cpu1 - cpu0) / 1000 / samples.length;
    return out;
  },
};
