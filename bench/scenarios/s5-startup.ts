/**
 * S5: process start → first proxied response. Spawns a fresh node process that creates a
 * broker and makes one request through it, timed from spawn() to the response line on its
 * stdout; the direct row is the same process making the request without a broker.
 */
import { spawn } from 'node:child_process';
import type { BenchEnv } from '../adapters/types.js';
import { median } from '../lib/stats.js';
import type { Scenario } from './types.js';

const RUNS = 10;

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

export const s5: Scenario = {
  id: 'S5',
  title: 'process start → first proxied response',
  paths: ['direct', 'clibroker'],
  metrics: [
    {
      key: 'p50Ms',
      label: 'spawn → first response',
      unit: 'ms',
      digits: 1,
      goal: { on: 'value', op: '<=', target: 80 },
    },
    { key: 'loadedMs', label: '… of which node boot + module load', unit: 'ms', digits: 1 },
    { key: 'readyMs', label: '… until listening', unit: 'ms', digits: 1 },
  ],
  async runStandalone(pathName, env) {
    const script = env.script(pathName === 'direct' ? 'first-request-direct' : 'first-request-clibroker');
    await once(script, env); // warm the page cache
    const runs: { ms: number; marks: Marks }[] = [];
    for (let i = 0; i < RUNS; i++) runs.push(await once(script, env));
    return {
      p50Ms: median(runs.map((r) => r.ms)),
      loadedMs: median(runs.map((r) => r.marks.loaded)),
      readyMs: median(runs.map((r) => r.marks.ready)),
      inProcessResponseMs: median(runs.map((r) => r.marks.response)),
    };
  },
};
