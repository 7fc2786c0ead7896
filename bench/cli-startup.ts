/**
 * Cold start of the bundled CLI: `clibroker --help` against bare `node -e 0`,
 * both as fresh processes, interleaved so machine noise hits both alike. Prints the medians
 * and the difference; the target is ≤ 40 ms. Plain spawn timing (no hyperfine).
 *
 *   npm run bench:cli            # builds the bundle first
 *   tsx bench/cli-startup.ts 41  # N runs each (default 31)
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/clibroker.js', import.meta.url));
const BUNDLE = fileURLToPath(new URL('../dist/commands/main.js', import.meta.url));
const TARGET_MS = 40;

function time(args: string[]): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}`);
  return ms;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

if (!existsSync(BUNDLE)) {
  console.error('dist/commands/main.js is missing: run `npm run build:js` (or `npm run bench:cli`)');
  process.exit(1);
}
const n = Number(process.argv[2] ?? 31);
const node: number[] = [];
const cli: number[] = [];
// Two warm-up pairs fill the OS page cache; "cold" here means a fresh process, as agents run it.
for (let i = 0; i < n + 2; i++) {
  const a = time(['-e', '0']);
  const b = time([BIN, '--help']);
  if (i >= 2) {
    node.push(a);
    cli.push(b);
  }
}
const rows = [
  { case: 'node -e 0', 'median ms': median(node).toFixed(1) },
  { case: 'clibroker --help', 'median ms': median(cli).toFixed(1) },
];
console.table(rows);
const diff = median(cli) - median(node);
const result = {
  runs: n,
  nodeMedianMs: median(node),
  cliMedianMs: median(cli),
  differenceMs: diff,
  targetMs: TARGET_MS,
  ok: diff <= TARGET_MS,
};
console.log(`difference: ${diff.toFixed(1)} ms (target ≤ ${TARGET_MS} ms) ${result.ok ? 'OK' : 'OVER'}`);
console.log(JSON.stringify(result));
