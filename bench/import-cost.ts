/**
 * What importing the package costs a host: fresh processes that import the built entry
 * points (dist/, as a host gets them), against `node -e 0` and against importing undici
 * alone, interleaved so machine noise hits all alike. Goal: importing `clibroker` costs at
 * most 30 ms more than importing undici (the broker's one unavoidable dependency).
 *
 *   npm run bench:import              # builds dist/ first
 *   tsx bench/import-cost.ts 31       # N runs each (default 21)
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median } from './lib/stats.js';

const DIST = fileURLToPath(new URL('../dist/', import.meta.url));
const GOAL_MS = 30;

if (!existsSync(`${DIST}index.js`)) {
  console.error('dist/index.js is missing: run `npm run build` (or `npm run bench:import`)');
  process.exit(1);
}

const importing = (specifier: string): string[] => [
  '--input-type=module',
  '-e',
  `await import(${JSON.stringify(specifier)})`,
];
const CASES: Record<string, string[]> = {
  'node -e 0': ['-e', '0'],
  "import('undici')": importing('undici'),
  "import('clibroker')": importing(pathToFileURL(`${DIST}index.js`).href),
  "import('clibroker/policy')": importing(pathToFileURL(`${DIST}policy/index.js`).href),
};

function time(args: string[]): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}`);
  return ms;
}

const n = Number(process.argv[2] ?? 21);
const load0 = loadavg();
const runs: Record<string, number[]> = Object.fromEntries(Object.keys(CASES).map((k) => [k, []]));
// two warm-up rounds fill the page cache; every round runs each case once, in turn
for (let i = 0; i < n + 2; i++)
  for (const [name, args] of Object.entries(CASES)) {
    const ms = time(args);
    if (i >= 2) runs[name]!.push(ms);
  }
const load1 = loadavg();
const med = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, median(v)]));
const f = (x: number): string => x.toFixed(1);
console.log(
  `\nimport cost — ${n} runs each, node ${process.version}, load at start ${load0.map(f).join(' ')}, at end ${load1.map(f).join(' ')}\n`,
);
console.table(
  Object.entries(med).map(([what, ms]) => ({
    what,
    'median ms': f(ms),
    'over node -e 0': f(ms - med['node -e 0']!),
  })),
);
const over = med["import('clibroker')"]! - med["import('undici')"]!;
console.log(
  `${over <= GOAL_MS ? 'pass' : 'FAIL'}  import('clibroker') ≤ import('undici') + ${GOAL_MS} ms: ${f(Math.abs(over))} ms ${over < 0 ? 'less' : 'more'}`,
);
console.log(JSON.stringify({ n, loadavg: load0, loadavgEnd: load1, medians: med, overUndiciMs: over }));
