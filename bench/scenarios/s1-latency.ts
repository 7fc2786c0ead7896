/** S1: 128 sequential GETs on one keep-alive connection; p50 latency (added vs direct is the goal). */
import { client, get } from '../lib/client.js';
import { quantile } from '../lib/stats.js';
import type { Scenario } from './types.js';

const WARMUP = 64;
const N = 128;

export const s1: Scenario = {
  id: 'S1',
  title: '128 sequential GETs, one keep-alive connection',
  rounds: 3,
  metrics: [
    {
      key: 'p50Us',
      label: 'p50 latency',
      unit: 'µs',
      digits: 0,
      goal: { on: 'added', op: '<=', target: 100 },
    },
    { key: 'p90Us', label: 'p90 latency', unit: 'µs', digits: 0 },
  ],
  async run(path) {
    const c = client(path.route, 'api.bench.example');
    try {
      for (let i = 0; i < WARMUP; i++) await get(c);
      const samples: number[] = [];
      for (let i = 0; i < N; i++) {
        const t = performance.now();
        await get(c);
        samples.push((performance.now() - t) * 1000);
      }
      return { p50Us: quantile(samples, 0.5), p90Us: quantile(samples, 0.9) };
    } finally {
      await c.destroy();
    }
  },
};
