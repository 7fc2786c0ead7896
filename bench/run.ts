/**
 * `npm run bench`: the macro suite (S1–S5). One local HTTPS upstream; each path
 * (direct, a plain CONNECT tunnel, a minimal node:http MITM, clibroker, http-mitm-proxy,
 * mitmproxy) is started fresh in its own process for each scenario, so its CPU and memory
 * are read apart from this load generator's. Prints a table (every figure beside the baseline of the same run), writes
 * bench/results/<date>.json and ends stdout with the same JSON on one line.
 *
 *   npx tsx bench/run.ts [--only S1,S4] [--paths direct,clibroker] [--profile] [--base <dir>]
 *
 * --base <dir> adds the path `clibroker@base`: the clibroker child bundled from another
 * checkout (a directory holding its src/ and bench/, e.g. `git archive main src bench`
 * unpacked in bench/.cache/base), measured in the same rounds, to judge a change in one run.
 *
 * --profile runs the clibroker child with --cpu-prof (bench/results/profiles/); summarise a
 * profile with `tsx bench/profile-top.ts <file>`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { clibroker, clibrokerBuild } from './adapters/clibroker.js';
import { direct } from './adapters/direct.js';
import { httpMitmProxy } from './adapters/http-mitm-proxy.js';
import { mitmproxy } from './adapters/mitmproxy.js';
import { nginx } from './adapters/nginx.js';
import { nodeMitm } from './adapters/node-mitm.js';
import { nodeRelay } from './adapters/node-relay.js';
import { tunnel } from './adapters/tunnel.js';
import type { BenchEnv, PathAdapter } from './adapters/types.js';
import { spawnNodeChild } from './lib/proc.js';
import { median } from './lib/stats.js';
import { buildRows, type Results, renderTable } from './lib/table.js';
import { s1 } from './scenarios/s1-latency.js';
import { s2 } from './scenarios/s2-throughput.js';
import { s3 } from './scenarios/s3-upload.js';
import { s4, s4Hosts, s4l } from './scenarios/s4-cold.js';
import { s5 } from './scenarios/s5-startup.js';
import type { Figures, Scenario } from './scenarios/types.js';

const BENCH = dirname(fileURLToPath(import.meta.url));
const CACHE = join(BENCH, '.cache');
const DIST = join(CACHE, 'dist');
const DIST_BASE = join(CACHE, 'dist-base');
const CHILDREN = [
  'upstream',
  'tunnel',
  'node-mitm',
  'node-relay',
  'clibroker',
  'http-mitm-proxy',
  'first-request-clibroker',
  'first-request-direct',
];

const ADAPTERS: readonly PathAdapter[] = [
  direct,
  tunnel,
  nginx,
  nodeMitm,
  nodeRelay,
  clibroker,
  httpMitmProxy,
  mitmproxy,
];
const SCENARIOS: readonly Scenario[] = [s1, s2, s3, s4, s4l, s5];

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? undefined : (process.argv[i + 1] ?? '');
}

function machine(): Record<string, unknown> {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  return {
    nproc: availableParallelism(),
    cpu: /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1]?.trim() ?? 'unknown',
    node: process.version,
    loadavg: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

const log = (msg: string): void => void process.stderr.write(`${msg}\n`);

/** One measurement of a scenario on a freshly started path. */
async function measure(s: Scenario, a: PathAdapter, env: BenchEnv): Promise<Figures> {
  if (s.runStandalone) return s.runStandalone(a.name, env);
  const running = await a.start(s.egress ? { ...env, hostsFile: egressFile(env.cacheDir, s) } : env);
  try {
    return await s.run!(running, env);
  } finally {
    await running.stop();
  }
}

/** A scenario's own egress list as a file, for the proxies that read one. */
function egressFile(cacheDir: string, s: Scenario): string {
  const file = join(cacheDir, `hosts-${s.id}.json`);
  writeFileSync(file, JSON.stringify(s.egress));
  return file;
}

/** Per-figure median over rounds. */
function combine(all: readonly Figures[]): Figures {
  const out: Figures = {};
  for (const k of Object.keys(all[0]!)) out[k] = median(all.map((f) => f[k]!).filter((v) => v !== undefined));
  return out;
}

async function main(): Promise<void> {
  const only = flag('only')?.toUpperCase().split(',');
  const onlyPaths = flag('paths')?.split(',');
  const profile = process.argv.includes('--profile');
  const base = flag('base');
  const scenarios = SCENARIOS.filter((s) => !only || only.includes(s.id));
  const all = base
    ? [...ADAPTERS, clibrokerBuild('clibroker@base', join(DIST_BASE, 'clibroker.mjs'))]
    : ADAPTERS;
  const adapters = all.filter((a) => !onlyPaths || onlyPaths.includes(a.name) || a.name === 'direct');
  const started = new Date();
  const facts = machine();
  log(
    `clibroker bench — ${facts.cpu} ×${facts.nproc}, node ${facts.node}, load ${(facts.loadavg as number[]).join(' ')}`,
  );

  // Children run as plain node on an esbuild bundle: no TypeScript loader in the measured process.
  mkdirSync(DIST, { recursive: true });
  await build({
    entryPoints: Object.fromEntries(CHILDREN.map((c) => [c, join(BENCH, 'servers', `${c}.ts`)])),
    outdir: DIST,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  if (base)
    await build({
      entryPoints: { clibroker: join(base, 'bench', 'servers', 'clibroker.ts') },
      outdir: DIST_BASE,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      logLevel: 'warning',
    });

  const upstream = await spawnNodeChild(join(DIST, 'upstream.mjs'), []);
  const upstreamCaFile = join(CACHE, 'upstream-ca.pem');
  const hostsFile = join(CACHE, 'hosts.json');
  writeFileSync(upstreamCaFile, upstream.ready.caPem!);
  writeFileSync(hostsFile, JSON.stringify(['api.bench.example', ...s4Hosts()]));
  const stamp = started.toISOString().replace(/[:.]/g, '-');
  const profileDir = profile ? join(BENCH, 'results', 'profiles', stamp) : undefined;
  const env: BenchEnv = {
    upstreamPort: upstream.ready.port,
    upstreamCaPem: upstream.ready.caPem!,
    upstreamCaFile,
    hostsFile,
    cacheDir: CACHE,
    script: (name) => join(DIST, `${name}.mjs`),
    profileDir,
    childNodeArgs: (process.env.BENCH_CHILD_NODE_ARGS ?? '').split(' ').filter(Boolean),
  };

  const skips = new Map<string, string | undefined>();
  for (const a of adapters) skips.set(a.name, await a.skipReason(env));
  const results: Results = {};
  const rounds: Record<string, Record<string, Figures[]>> = {};
  try {
    for (const s of scenarios) {
      results[s.id] = {};
      rounds[s.id] = {};
      const n = s.rounds ?? 1;
      for (let round = 1; round <= n; round++) {
        for (const a of adapters) {
          if (s.paths && !s.paths.includes(a.name)) continue;
          const skip = skips.get(a.name);
          if (skip) {
            results[s.id]![a.name] = { skipped: skip };
            continue;
          }
          if (results[s.id]![a.name] && 'error' in results[s.id]![a.name]!) continue;
          const t = performance.now();
          try {
            const seen = rounds[s.id]![a.name] ?? [];
            seen.push(await measure(s, a, env));
            rounds[s.id]![a.name] = seen;
            results[s.id]![a.name] = combine(seen);
          } catch (err) {
            results[s.id]![a.name] = { error: (err as Error).message };
          }
          const shown = JSON.stringify(rounds[s.id]![a.name]?.at(-1) ?? results[s.id]![a.name], (_k, v) =>
            typeof v === 'number' ? Math.round(v * 100) / 100 : v,
          );
          log(
            `  ${s.id}${n > 1 ? `.${round}` : '  '} ${a.name.padEnd(16)} ${((performance.now() - t) / 1000).toFixed(1).padStart(4)} s  ${shown}`,
          );
        }
      }
    }
  } finally {
    await upstream.stop();
  }

  const paths = adapters.map((a) => a.name);
  const rows = buildRows(scenarios, paths, results);
  const finished = new Date();
  console.log(
    `\nclibroker macro bench — ${started.toISOString()} — ${facts.cpu} ×${facts.nproc}, node ${facts.node}, load at start ${(facts.loadavg as number[]).join(' ')}, at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
  console.log(renderTable(scenarios, rows));
  const verdicts = rows.filter((r) => r.path === 'clibroker' && r.pass !== undefined);
  console.log(
    `\nclibroker goals: ${verdicts.filter((r) => r.pass).length} pass, ${verdicts.filter((r) => !r.pass).length} fail${
      verdicts.some((r) => !r.pass)
        ? ` (${verdicts
            .filter((r) => !r.pass)
            .map((r) => `${r.scenario} ${r.metric}`)
            .join('; ')})`
        : ''
    }`,
  );
  if (profileDir) console.log(`profiles: ${profileDir}`);

  const json = {
    date: started.toISOString(),
    durationS: Math.round((finished.getTime() - started.getTime()) / 100) / 10,
    machine: { ...facts, loadavgEnd: loadavg() },
    paths,
    skipped: Object.fromEntries(skips),
    results,
    rounds,
    rows,
  };
  mkdirSync(join(BENCH, 'results'), { recursive: true });
  const file = join(BENCH, 'results', `${stamp}.json`);
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(join(BENCH, 'results', 'latest.json'), `${JSON.stringify(json, null, 2)}\n`);
  console.log(`results: ${file}`);
  console.log(JSON.stringify(json));
}

await main();
