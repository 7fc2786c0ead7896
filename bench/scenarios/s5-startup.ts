/**
 * S5: process start → first proxied response. Spawns a fresh node process that creates a
 * broker and makes one request through it, timed from spawn() to the response line on its
 * stdout; the direct row is the same process making the request without a broker, and also
 * times `node -e 0` (node's own boot, the floor of any node process). The nginx row is nginx
 * spawned on its configuration until a GET through it is answered.
 *
 * Idle RSS: each proxy (clibroker's bench child, the plain tunnel, nginx) started, one GET
 * through it, then left idle for IDLE_MS; its VmRSS then, median of IDLE_RUNS starts.
 */
import { spawn } from 'node:child_process';
import { clibroker } from '../adapters/clibroker.js';
import { nginx, startNginx } from '../adapters/nginx.js';
import { tunnel } from '../adapters/tunnel.js';
import type { BenchEnv, PathAdapter } from '../adapters/types.js';
import { client, get } from '../lib/client.js';
import { rssBytes, stopChild } from '../lib/proc.js';
import { median } from '../lib/stats.js';
import type { Figures, Scenario } from './types.js';

const RUNS = 10;
const IDLE_RUNS = 3;
const IDLE_MS = 500;
const MIB = 1024 * 1024;

interface Marks {
  loaded: number;
  ready: number;
  response: number;
}

function once(script: string, env: BenchEnv): Promise<{ ms: number; marks: Marks }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const proc = spawn(process.execPath, [script, String(env.upstreamPort), env.upstreamCaFile], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let ms: number | undefined;
    proc.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (ms === undefined && out.includes('\n')) ms = performance.now() - t0;
    });
    proc.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    proc.once('error', reject);
    proc.once('close', (code) => {
      if (code !== 0 || ms === undefined)
        return reject(new Error(`${script} exited ${code}: ${err.slice(0, 2000)}`));
      resolve({ ms, marks: JSON.parse(out) as Marks });
    });
  });
}

/** spawn() → exit of `node -e 0`. */
function nodeBoot(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const proc = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    proc.once('error', reject);
    proc.once('close', () => resolve(performance.now() - t0));
  });
}

/** spawn() of nginx → the first response through it. */
async function nginxOnce(env: BenchEnv): Promise<number> {
  const t0 = performance.now();
  const { proc, port, caPem } = await startNginx(env, 'nginx-s5');
  try {
    const c = client({ port, caPem, proxy: false }, 'api.bench.example');
    await get(c);
    const ms = performance.now() - t0;
    await c.destroy();
    return ms;
  } finally {
    await stopChild(proc, () => proc.kill('SIGQUIT'));
  }
}

/** A proxy's VmRSS after it started, answered one GET, and sat idle for IDLE_MS. */
async function idleRss(adapter: PathAdapter, env: BenchEnv): Promise<number> {
  const running = await adapter.start(env);
  try {
    const c = client(running.route, 'api.bench.example');
    await get(c);
    await c.destroy();
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    return rssBytes(running.pid!);
  } finally {
    await running.stop();
  }
}

async function idleRssMiB(adapter: PathAdapter, env: BenchEnv): Promise<number> {
  const runs: number[] = [];
  for (let i = 0; i < IDLE_RUNS; i++) runs.push(await idleRss(adapter, env));
  return median(runs) / MIB;
}

export const s5: Scenario = {
  id: 'S5',
  title: 'process start → first proxied response',
  paths: ['direct', 'connect-tunnel', 'nginx', 'clibroker'],
  metrics: [
    {
      key: 'p50Ms',
      label: 'spawn → first response',
      unit: 'ms',
      digits: 1,
      paths: ['direct', 'nginx', 'clibroker'],
      // nginx's start, twice over, plus what any node process pays before its first line runs
      goal: {
        on: 'value',
        op: '<=',
        target: 80,
        budget: (f) => {
          const ng = f('nginx', 'p50Ms');
          const boot = f('direct', 'nodeBootMs');
          return ng === undefined || boot === undefined
            ? undefined
            : { target: 2 * ng + boot, text: '2 × nginx + node -e 0' };
        },
      },
    },
    {
      key: 'loadedMs',
      label: '… of which node boot + module load',
      unit: 'ms',
      digits: 1,
      paths: ['direct', 'clibroker'],
    },
    { key: 'readyMs', label: '… until listening', unit: 'ms', digits: 1, paths: ['direct', 'clibroker'] },
    { key: 'nodeBootMs', label: 'node -e 0 (spawn → exit)', unit: 'ms', digits: 1, paths: ['direct'] },
    {
      key: 'idleRssMiB',
      label: 'idle RSS after start and one request',
      unit: 'MiB',
      digits: 1,
      proxyOnly: true,
      goal: { on: 'ratio', op: '<=', target: 2 },
    },
  ],
  async runStandalone(pathName, env): Promise<Figures> {
    if (pathName === 'connect-tunnel') return { idleRssMiB: await idleRssMiB(tunnel, env) };
    if (pathName === 'nginx') {
      await nginxOnce(env);
      const ms: number[] = [];
      for (let i = 0; i < RUNS; i++) ms.push(await nginxOnce(env));
      return { p50Ms: median(ms), idleRssMiB: await idleRssMiB(nginx, env) };
    }
    if (pathName === 'direct') {
      await nodeBoot();
      const boots: number[] = [];
      for (let i = 0; i < RUNS; i++) boots.push(await nodeBoot());
      const figures = await this.runStandalone!('direct-request', env);
      return { ...figures, nodeBootMs: median(boots) };
    }
    const script = env.script(
      pathName === 'direct-request' ? 'first-request-direct' : 'first-request-clibroker',
    );
    await once(script, env); // warm the page cache
    const runs: { ms: number; marks: Marks }[] = [];
    for (let i = 0; i < RUNS; i++) runs.push(await once(script, env));
    const idle: Figures = pathName === 'clibroker' ? { idleRssMiB: await idleRssMiB(clibroker, env) } : {};
    return {
      ...idle,
      p50Ms: median(runs.map((r) => r.ms)),
      loadedMs: median(runs.map((r) => r.marks.loaded)),
      readyMs: median(runs.map((r) => r.marks.ready)),
      inProcessResponseMs: median(runs.map((r) => r.marks.response)),
    };
  },
};
