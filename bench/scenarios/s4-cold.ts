/**
 * S4 and S4L: a new connection each time — CONNECT, both TLS handshakes, one GET — sequential,
 * bounded by count and time.
 *   - S4 cycles over the host names of a normal egress list (15 names plus api.bench.example:
 *     16 hosts, so one leaf names them all and the session builds it when it opens);
 *   - S4L is a session of 640 hosts (639 names plus api.bench.example), each connection to a
 *     host not used before, so the figure carries every leaf the broker mints on first use.
 * nginx serves every name from one `*.bench.example` leaf. What minting one leaf costs is
 * bench/micro/cert-mint.ts's figure.
 */
import { client, get } from '../lib/client.js';
import { quantile } from '../lib/stats.js';
import type { Scenario } from './types.js';

export const S4_MAX = 300;
const WARMUP = 8;
const BUDGET_MS = 5000;
const MIN = 10;
/** S4's names: with api.bench.example a 16-host egress list */
const NAMES = 15;
/** S4L's names: with api.bench.example a 640-host egress list */
const LARGE_NAMES = 639;

const names = (n: number): string[] => Array.from({ length: n }, (_, i) => `h${i}.bench.example`);

/** Every host S4 uses, all in clibroker's egress list. */
export function s4Hosts(): string[] {
  return names(NAMES);
}

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

function coldScenario(id: string, title: string, count: number, max: number): Scenario {
  const host = (i: number): string => `h${i % count}.bench.example`;
  return {
    id,
    title,
    rounds: 3,
    egress: ['api.bench.example', ...names(count)],
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
      for (let i = 0; i < max && (i < MIN || performance.now() < until); i++)
        samples.push(await cold(path.route, host(WARMUP + i)));
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
}

export const s4 = coldScenario(
  'S4',
  'a new connection per request over a 16-host egress list',
  NAMES,
  S4_MAX,
);
/** Every host once: the warm-up's 8, then up to 631 more, each new to the proxy. */
export const s4l = coldScenario(
  'S4L',
  'a new connection per request, each to a new host of a 640-host egress list',
  LARGE_NAMES,
  LARGE_NAMES - WARMUP,
);
