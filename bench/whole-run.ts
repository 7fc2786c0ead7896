/**
 * Scenario W: a whole governed run of real `gh api user` against the embedded GitHub-like
 * vendor, the way it is paid for, beside the same gh command through a plain CONNECT tunnel
 * measured in the same run (interleaved rounds, medians).
 *
 *   tunnel      gh spawned with HTTPS_PROXY at a node `net` CONNECT pipe to the vendor
 *               (the vendor's CA trusted, the real token in GH_TOKEN): what any proxy costs
 *   W plain     `runner.run` in this process, the plain profile (broker, policy, audit, store)
 *   W isolated  the same with a pinned /usr/bin/gh in the isolated profile (bubblewrap and the
 *               network relay); skipped with the reason when bubblewrap cannot run here
 *   CLI         `clibroker vendor run --cli gh -- api user` as a fresh process under
 *               /usr/bin/time (wall, CPU, peak RSS), its store on disk and the mock vendor in
 *               it, beside `node -e 0` and the tunnelled gh under the same /usr/bin/time
 *
 * Goals: W plain ≤ 1.05× tunnel; W isolated ≤ tunnel + 30 ms; CLI ≤ node -e 0 + tunnel + 60 ms
 * and ≤ 64 MiB peak.
 *
 *   npm run bench:whole          # builds the CLI bundle first
 *   tsx bench/whole-run.ts 9     # rounds (default 7)
 *
 * BENCH_CLI_BASELINE=<another checkout's bin/clibroker.js, built> adds that build's CLI to every
 * round, right after this one's, with its own store: a before/after of the same run.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBroker } from '../src/broker/broker.js';
import { knownConformance } from '../src/conformance/known.js';
import { defineExtension } from '../src/manifest/define.js';
import { githubVendor } from '../src/mockvendor/github.js';
import { startMockVendor } from '../src/mockvendor/server.js';
import { createRunner, type RunInput } from '../src/runs/index.js';
import { isolationUnavailable } from '../src/sandbox/index.js';
import { openSqliteStore } from '../src/store/index.js';
import { GH, spawnMs, startTunnel, TIME, timed } from './lib/gh-baseline.js';
import { median } from './lib/stats.js';

const BIN = fileURLToPath(new URL('../bin/clibroker.js', import.meta.url));
const BASELINE_BIN = process.env.BENCH_CLI_BASELINE || undefined;
const TOKEN = 'gho_BenchWholeRunRealToken000000000001';
const rounds = Number(process.argv[2] ?? 7);

// the github extension clibroker's own conformance runs use (gh and curl, the token scheme)
const extension = knownConformance('gh')!.extension;
const pinned = defineExtension({
  ...extension,
  clis: extension.clis.map((c) =>
    c.id === 'gh' ? { ...c, binary: { ...c.binary, image: 'gh-pinned' } } : c,
  ),
} as never);
const connection = { kind: 'oauth_access_token', accessToken: TOKEN } as const;
const tier = {
  requested: 'read',
  organizationCeiling: 'write',
  assignmentAllow: 'write',
  identity: 'assigned',
};

async function main(): Promise<void> {
  if (!existsSync(GH)) throw new Error(`${GH} is missing (Debian package gh)`);
  if (!existsSync(TIME)) throw new Error(`${TIME} is missing (Debian package time)`);
  const load0 = loadavg();
  const work = mkdtempSync(join(tmpdir(), 'clibroker-bench-w-'));
  const vendor = await startMockVendor(githubVendor({ token: TOKEN }));
  // the CA alone in its own directory, named by SSL_CERT_DIR too, as the runner does for its
  // children: otherwise Go reads all of /etc/ssl/certs at start and the baseline is slower
  const certDir = join(work, 'certs');
  mkdirSync(certDir);
  const caFile = join(certDir, 'vendor-ca.pem');
  writeFileSync(caFile, vendor.caPem);
  const tunnel = await startTunnel(vendor.resolve('api.github.com'));
  const broker = await createBroker({
    upstream: { ca: vendor.caPem, resolve: vendor.resolve, allowAddresses: ['127.0.0.0/8'] },
  });
  const store = openSqliteStore(join(work, 'runs.db'));
  const runner = createRunner({ broker, store });
  const noIsolation = await isolationUnavailable();

  const ghEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: join(work, 'home'),
    GH_CONFIG_DIR: join(work, 'gh'),
    GH_TOKEN: TOKEN,
    GH_NO_UPDATE_NOTIFIER: '1',
    GH_PROMPT_DISABLED: '1',
    HTTPS_PROXY: `http://127.0.0.1:${tunnel.port}`,
    SSL_CERT_FILE: caFile,
    SSL_CERT_DIR: certDir,
  };
  const cliEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: join(work, 'home'),
    CLIBROKER_MOCK_VENDOR: 'github',
    CLIBROKER_CONNECTION: JSON.stringify(connection),
  };
  const cliArgsOf = (bin: string, db: string): string[] => [
    bin,
    'vendor',
    'run',
    '--store',
    join(work, db),
    '--manifest',
    JSON.stringify(extension),
    '--cli',
    'gh',
    '--',
    'api',
    'user',
  ];
  const cliArgs = cliArgsOf(BIN, 'cli.db');
  const baseArgs = BASELINE_BIN ? cliArgsOf(BASELINE_BIN, 'cli-baseline.db') : undefined;
  const input = (over: Partial<RunInput> = {}): RunInput =>
    ({
      extension,
      cli: 'gh',
      args: ['api', 'user'],
      connection,
      tier,
      context: { kind: 'agent-step' },
      deadlineMs: 60_000,
      ...over,
    }) as RunInput;
  const run = async (over: Partial<RunInput> = {}): Promise<number> => {
    const t0 = performance.now();
    const r = await runner.run(input(over));
    if (r.status !== 'completed' || r.exitCode !== 0) throw new Error(`W run ${r.status}: ${r.stderr}`);
    return performance.now() - t0;
  };
  const isolated = {
    extension: pinned,
    image: { name: 'gh-pinned', executable: GH, profile: 'isolated' as const, verify: async () => {} },
  };

  const fig: Record<string, number[]> = {};
  const add = (k: string, v: number): void => {
    fig[k] = [...(fig[k] ?? []), v];
  };
  try {
    // one warm-up of each fills the page cache and the store's first-open work
    await spawnMs(GH, ['api', 'user'], ghEnv);
    await run();
    if (!noIsolation) await run(isolated);
    await timed(cliArgs, cliEnv);
    if (baseArgs) await timed(baseArgs, cliEnv);
    for (let i = 0; i < rounds; i++) {
      add('tunnel', await spawnMs(GH, ['api', 'user'], ghEnv));
      add('plain', await run());
      if (!noIsolation) add('isolated', await run(isolated));
      const node = await timed([process.execPath, '-e', '0'], { PATH: process.env.PATH });
      add('nodeWall', node.wallMs);
      add('nodeCpu', node.cpuMs);
      add('nodePeak', node.peakMiB);
      const gh = await timed([GH, 'api', 'user'], ghEnv);
      add('ghWall', gh.wallMs);
      add('ghCpu', gh.cpuMs);
      add('ghPeak', gh.peakMiB);
      const cli = await timed(cliArgs, cliEnv);
      add('cliWall', cli.wallMs);
      add('cliCpu', cli.cpuMs);
      add('cliPeak', cli.peakMiB);
      if (baseArgs) {
        const base = await timed(baseArgs, cliEnv);
        add('baseWall', base.wallMs);
        add('baseCpu', base.cpuMs);
        add('basePeak', base.peakMiB);
      }
    }
  } finally {
    await broker.close();
    await store.close();
    await vendor.close();
    tunnel.server.close();
    rmSync(work, { recursive: true, force: true });
  }

  const m = (k: string): number | undefined => (fig[k] ? median(fig[k]!) : undefined);
  const f1 = (v: number | undefined): string => (v === undefined ? '—' : v.toFixed(1));
  const tunnelMs = m('tunnel')!;
  const plainMs = m('plain')!;
  const isoMs = m('isolated');
  const cliBudget = m('nodeWall')! + m('ghWall')! + 60;
  const goals = [
    {
      goal: 'W plain ≤ 1.05× tunnel',
      value: `${f1(plainMs)} ms (×${(plainMs / tunnelMs).toFixed(2)})`,
      pass: plainMs <= 1.05 * tunnelMs,
    },
    isoMs === undefined
      ? { goal: 'W isolated ≤ tunnel + 30 ms', value: `skipped: ${noIsolation}`, pass: undefined }
      : {
          goal: 'W isolated ≤ tunnel + 30 ms',
          value: `${f1(isoMs)} ms (+${f1(isoMs - tunnelMs)})`,
          pass: isoMs <= tunnelMs + 30,
        },
    {
      goal: `CLI ≤ node -e 0 + gh via tunnel + 60 ms (= ${f1(cliBudget)} ms)`,
      value: `${f1(m('cliWall'))} ms`,
      pass: m('cliWall')! <= cliBudget,
    },
    { goal: 'CLI peak RSS ≤ 64 MiB', value: `${f1(m('cliPeak'))} MiB`, pass: m('cliPeak')! <= 64 },
  ];
  console.log(
    `\nscenario W — gh api user, ${rounds} rounds, node ${process.version}, load at start ${load0.map((l) => l.toFixed(2)).join(' ')}, at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
  console.table([
    { path: 'gh via CONNECT tunnel (spawn → exit)', 'wall ms': f1(tunnelMs) },
    { path: 'W plain: runner.run', 'wall ms': f1(plainMs) },
    {
      path: 'W isolated: runner.run',
      'wall ms': isoMs === undefined ? `skipped: ${noIsolation}` : f1(isoMs),
    },
  ]);
  console.table([
    {
      process: 'node -e 0',
      'wall ms': f1(m('nodeWall')),
      'CPU ms': f1(m('nodeCpu')),
      'peak MiB': f1(m('nodePeak')),
    },
    {
      process: 'gh api user via tunnel',
      'wall ms': f1(m('ghWall')),
      'CPU ms': f1(m('ghCpu')),
      'peak MiB': f1(m('ghPeak')),
    },
    {
      process: 'clibroker vendor run … gh api user',
      'wall ms': f1(m('cliWall')),
      'CPU ms': f1(m('cliCpu')),
      'peak MiB': f1(m('cliPeak')),
    },
    ...(baseArgs
      ? [
          {
            process: 'the same, baseline build',
            'wall ms': f1(m('baseWall')),
            'CPU ms': f1(m('baseCpu')),
            'peak MiB': f1(m('basePeak')),
          },
        ]
      : []),
  ]);
  for (const g of goals)
    console.log(`${g.pass === undefined ? '—   ' : g.pass ? 'pass' : 'FAIL'}  ${g.goal}: ${g.value}`);
  console.log(
    JSON.stringify({
      scenario: 'W',
      rounds,
      medians: Object.fromEntries(Object.keys(fig).map((k) => [k, m(k)])),
      goals,
    }),
  );
}

await main();
