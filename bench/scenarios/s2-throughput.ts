/**
 * S2: 32 keep-alive connections, 3 s measured after 1 s of warm-up, in three rounds
 * interleaved over the paths (medians); throughput vs direct, the proxy's CPU per 1000
 * requests (against nginx's in the same run) and its peak RSS (against the plain tunnel's).
 * One 5 s run per path let a burst of CPU steal on this shared VM land on one path only:
 * the same build's CPU per request moved by ±20 % between back-to-back runs.
 */
import { get, pool } from '../lib/client.js';
import { rssSampler } from '../lib/proc.js';
import type { Scenario } from './types.js';

const CONNECTIONS = 32;
const WARMUP_MS = 1000;
const MEASURE_MS = 3000;

async function saturate(p: ReturnType<typeof pool>, ms: number): Promise<number> {
  const until = performance.now() + ms;
  let done = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < until) {
        await get(p);
        done++;
      }
    }),
  );
  return done;
}

export const s2: Scenario = {
  id: 'S2',
  title: '32 keep-alive connections for 3 s, three rounds',
  rounds: 3,
  metrics: [
    {
      key: 'reqPerSec',
      label: 'throughput',
      unit: 'req/s',
      digits: 0,
      goal: { on: 'ratio', op: '>=', target: 0.55 },
    },
    {
      key: 'cpuMsPer1000',
      label: 'proxy CPU per 1000 req',
      unit: 'ms',
      digits: 1,
      goal: { on: 'ratio', vs: 'nginx', op: '<=', target: 2 },
      proxyOnly: true,
    },
    {
      key: 'peakRssMiB',
      label: 'proxy peak RSS',
      unit: 'MiB',
      digits: 1,
      goal: { on: 'ratio', op: '<=', target: 2 },
      proxyOnly: true,
    },
  ],
  async run(path) {
    const p = pool(path.route, 'api.bench.example', CONNECTIONS);
    try {
      const sampler = path.pid ? rssSampler(path.pid) : undefined;
      await saturate(p, WARMUP_MS);
      const cpu0 = await path.cpuMicros?.();
      const t0 = performance.now();
      const n = await saturate(p, MEASURE_MS);
      const secs = (performance.now() - t0) / 1000;
      const cpu1 = await path.cpuMicros?.();
      const out: Record<string, number> = { reqPerSec: n / secs, requests: n };
      if (cpu0 !== undefined && cpu1 !== undefined) out.cpuMsPer1000 = (cpu1 - cpu0) / 1000 / (n / 1000);
      if (sampler) out.peakRssMiB = sampler.stop() / (1024 * 1024);
      return out;
    } finally {
      await p.destroy();
    }
  },
};
