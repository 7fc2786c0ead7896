/**
 * S3: ten 8 MiB uploads on one connection; throughput vs direct, the proxy's peak RSS growth
 * over idle, and its CPU per MiB relayed (no goal: it tells what the proxy takes from the
 * client and the origin, which share the machine's two cores with it).
 */
import { randomBytes } from 'node:crypto';
import { client, get, upload } from '../lib/client.js';
import { rssBytes, rssSampler } from '../lib/proc.js';
import { sleep } from '../lib/stats.js';
import type { Scenario } from './types.js';

const MiB = 1024 * 1024;
// Exactly the per-request body cap (8 MiB passes, 8 MiB + 1 is refused).
const BODY = randomBytes(8 * MiB);
const UPLOADS = 10;

export const s3: Scenario = {
  id: 'S3',
  title: 'ten 8 MiB uploads',
  rounds: 3,
  metrics: [
    {
      key: 'mibPerSec',
      label: 'upload throughput',
      unit: 'MiB/s',
      digits: 0,
      goal: { on: 'ratio', op: '>=', target: 0.65 },
    },
    {
      key: 'rssGrowthMiB',
      label: 'proxy peak RSS over idle',
      unit: 'MiB',
      digits: 1,
      goal: { on: 'value', op: '<=', target: 16 },
      proxyOnly: true,
    },
    {
      key: 'cpuMsPerMiB',
      label: 'proxy CPU per MiB',
      unit: 'ms',
      digits: 2,
      proxyOnly: true,
    },
  ],
  async run(path) {
    const c = client(path.route, 'api.bench.example');
    try {
      // Idle = started, tunnel and upstream connection open, no body seen yet.
      await get(c);
      await sleep(200);
      const idle = path.pid ? rssBytes(path.pid) : 0;
      const sampler = path.pid ? rssSampler(path.pid) : undefined;
      // Node's Buffers live outside the V8 heap: arrayBuffers tells bytes held (live or garbage
      // not yet collected) from allocator slack.
      let peakArrayBuffers = 0;
      let sampling = path.memory !== undefined;
      const memLoop = (async () => {
        while (sampling) {
          peakArrayBuffers = Math.max(peakArrayBuffers, (await path.memory!()).arrayBuffers);
          await sleep(20);
        }
      })();
      const cpu0 = await path.cpuMicros?.();
      const t0 = performance.now();
      for (let i = 0; i < UPLOADS; i++) await upload(c, BODY);
      const secs = (performance.now() - t0) / 1000;
      const cpu1 = await path.cpuMicros?.();
      sampling = false;
      await memLoop;
      const peak = sampler?.stop();
      const mib = (UPLOADS * BODY.length) / MiB;
      const out: Record<string, number> = { mibPerSec: mib / secs };
      if (cpu0 !== undefined && cpu1 !== undefined) out.cpuMsPerMiB = (cpu1 - cpu0) / 1000 / mib;
      if (peak !== undefined) {
        out.rssGrowthMiB = (peak - idle) / MiB;
        out.rssIdleMiB = idle / MiB;
      }
      if (path.memory) {
        out.peakArrayBuffersMiB = peakArrayBuffers / MiB;
      }
      return out;
    } finally {
      await c.destroy();
    }
  },
};
