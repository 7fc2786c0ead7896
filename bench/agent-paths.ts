/**
 * The agent's real paths to a governed `gh api user`, each beside the same gh through a plain
 * CONNECT tunnel and `node -e 0`, measured in one run (interleaved rounds, medians):
 *
 *   A          `clibroker run gh_cli -- api user`: the built binary, a fresh process per call,
 *              the thin client of a `clibroker daemon` started once (gh pinned by sha256 in
 *              the isolated profile, the executor token in a 0600 file, the mock vendor
 *              reached through the configuration's `upstream`)
 *   A socket   the same call to the same daemon from this process (the daemon client over
 *              the unix socket): A less the client process
 *   A stub     the same client process against a stub daemon in this process that answers at
 *              once: the client's own cost, split at the moment its request arrives (spawn →
 *              request: boot, imports, flags, the socket directory's check; answer → exit),
 *              beside the tiers of its start spawned the same way (node -e 0, an empty ES
 *              module, `clibroker --version`, the daemon client's chunk imported alone)
 *   M stdio    an MCP `tools/call` of gh_cli `api user` from the SDK's Client to
 *              `clibroker serve --config … --mcp stdio`, spawned once
 *   M HTTP     the same over Streamable HTTP to `clibroker serve --config … --port 0`
 *
 * The daemon's own time per call is its `daemon.request` log line's durationMs; the servers'
 * own CPU per call is read from /proc (not the sandbox's: bwrap's PID namespace reaps the CLI,
 * so the CLI's CPU never reaches the server's counters), and so is each client process's.
 *
 * Goals: A ≤ gh via tunnel + node -e 0 + 20 ms; M ≤ gh via tunnel + 15 ms (stdio and HTTP).
 *
 *   npm run bench:agent            # builds the JavaScript first; 9 rounds
 *   tsx bench/agent-paths.ts 15                         # rounds
 *
 * BENCH_CLI_BASELINE=<another build's bin/clibroker.js> adds that build's client to every round,
 * right after this one's, against the same daemon and the same stub: a before/after of the
 * client in one run; BENCH_CLI=<a build's bin/clibroker.js> measures that build instead of this
 * checkout's.
 *
 * The build is copied aside first (bench/.cache/agent-paths), so a rebuild of the
 * checkout during the run changes nothing measured. BENCH_CPU_PROF=<dir> runs the servers and
 * every client process with `node --cpu-prof` into <dir>/<daemon|serve|stdio|client>, from a
 * bundle built the same way but not minified (readable frames), and writes <dir>/rounds.json:
 * the measured rounds' window on the profiles' clock, for `profile-top.ts --window` (figures
 * then include the profiler's cost: use them to find where the time goes, not for the goals).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OperatorConfig } from '../src/config/types.js';
import { callDaemon } from '../src/daemon/client.js';
import { ROUTES } from '../src/daemon/protocol.js';
import { ghCli, githubExtension } from '../src/manifest/examples.js';
import { githubVendor } from '../src/mockvendor/github.js';
import { startMockVendor } from '../src/mockvendor/server.js';
import { isolationUnavailable } from '../src/sandbox/index.js';
import { configDir } from '../tests/helpers/config.js';
import { GH, startTunnel, timed } from './lib/gh-baseline.js';
import { procCpuMicros, stopChild } from './lib/proc.js';
import { median } from './lib/stats.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SNAPSHOT = join(ROOT, 'bench', '.cache', 'agent-paths');
// BENCH_CLI: another build's bin/clibroker.js, measured instead of this checkout's (no copy made)
const OTHER_BIN = process.env['BENCH_CLI'] || undefined;
const BIN = OTHER_BIN ?? join(SNAPSHOT, 'bin', 'clibroker.js');
const PATH = process.env['PATH'] ?? '/usr/bin:/bin';
const PROF = process.env['BENCH_CPU_PROF'] || undefined;
const BASELINE_BIN = process.env['BENCH_CLI_BASELINE'] || undefined;
const rounds = Number(process.argv[2] ?? 9);
const TOKEN = 'gho_BenchAgentPathsRealToken0000000001';
const GH_ARGS = { args: ['api', 'user'] };

const nodeArgs = (tag: string): string[] => (PROF ? ['--cpu-prof', `--cpu-prof-dir=${join(PROF, tag)}`] : []);

/**
 * bin/clibroker.js and the build's dist/ copied under bench/.cache, where node_modules and
 * help-trees still resolve; for a profile, the binary's entry is built there with the
 * package's build options, but not minified (readable frames).
 */
async function snapshotBundle(): Promise<void> {
  rmSync(SNAPSHOT, { recursive: true, force: true });
  mkdirSync(join(SNAPSHOT, 'bin'), { recursive: true });
  cpSync(join(ROOT, 'bin', 'clibroker.js'), BIN);
  const outdir = join(SNAPSHOT, 'dist');
  if (!PROF) return cpSync(join(ROOT, 'dist'), outdir, { recursive: true });
  const [{ build }, { buildOptions }] = await Promise.all([import('esbuild'), import('../scripts/build.js')]);
  await build({
    ...buildOptions(
      { 'commands/main': 'src/commands/main.ts', 'commands/fast-run': 'src/commands/fast-run.ts' },
      outdir,
    ),
    minifyWhitespace: false,
    minifySyntax: false,
  });
}

/** CLOCK_MONOTONIC in µs: the clock of a .cpuprofile's startTime and endTime. */
const monotonicMicros = (): number => Number(process.hrtime.bigint() / 1000n);

/** cutime + cstime of a process (the children it reaped), in µs. */
function reapedCpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) * 10_000;
}

/** A long-lived server process: its first stdout line, its stderr kept (the daemon's per-call log). */
interface Server {
  proc: ChildProcess;
  first: Record<string, unknown>;
  stderr(): string;
}

function startServer(args: string[], tag: string): Promise<Server> {
  const proc = spawn(process.execPath, [...nodeArgs(tag), BIN, ...args], {
    env: { PATH },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stderr!.on('data', (c: Buffer) => {
    err += c.toString();
  });
  return new Promise<Server>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${tag}: no listening line in 60 s\n${out}${err}`)),
      60_000,
    );
    proc.stdout!.on('data', (c: Buffer) => {
      if (out.includes('\n')) return;
      out += c.toString();
      if (!out.includes('\n')) return;
      clearTimeout(timer);
      try {
        resolve({ proc, first: JSON.parse(out.split('\n')[0]!), stderr: () => err });
      } catch {
        reject(new Error(`${tag} printed ${out.slice(0, 400)}\n${err}`));
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${tag} exited ${code} before listening\n${out}${err}`));
    });
  }).catch((e: unknown) => {
    proc.kill('SIGKILL'); // this one child, by its own handle: it never served
    throw e;
  });
}

/** The durationMs of every `daemon.request` line the daemon logged so far. */
function daemonDurations(log: string): number[] {
  const out: number[] = [];
  for (const line of log.split('\n')) {
    if (!line.includes('"daemon.request"')) continue;
    try {
      out.push(Number(JSON.parse(line).durationMs));
    } catch {}
  }
  return out;
}

/** A stub daemon on `socket` answering every call at once; `arrived` holds each request's performance.now(). */
async function startStub(
  socket: string,
): Promise<{ arrived: number[]; answered: number[]; close(): Promise<void> }> {
  const arrived: number[] = [];
  const answered: number[] = [];
  const body = JSON.stringify({
    ok: true,
    result: {
      exitCode: 0,
      stdout: '{"login":"octocat"}',
      stderr: '',
      truncated: false,
      runId: 'stub',
      cliTier: 'read',
      cliTierReason: 'requested',
    },
  });
  const server = createServer((req, res) => {
    arrived.push(performance.now());
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body, () => answered.push(performance.now()));
    });
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  return {
    arrived,
    answered,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Spawn → exit of `argv` and the moment it started, by this process's clock; rejects on a non-zero exit. */
function spawned(argv: string[], env: NodeJS.ProcessEnv): Promise<{ t0: number; t1: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const p = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    p.stderr.resume();
    p.once('error', reject);
    p.once('close', (code) =>
      code === 0
        ? resolve({ t0, t1: performance.now() })
        : reject(new Error(`${argv[0]} exited ${code}: ${out}`)),
    );
  });
}

/**
 * What the client's start is made of, each a process spawned like the stub's client: node
 * alone, an empty ES module (node's ESM loader), `clibroker --version` (the bundle's router,
 * no command), and an ES module importing only the chunk `run` loads to reach the daemon
 * (what the router's `run` adds to reach the daemon; absent if the bundle has no such chunk),
 * and one importing only the fast path's entry, not run (what `run` loads before it connects).
 */
function clientTiers(bin: string, scratch: string): [string, string[]][] {
  const empty = join(scratch, 'empty.mjs');
  writeFileSync(empty, '');
  const chunks = join(dirname(dirname(bin)), 'dist', 'chunks');
  const chunk = readdirSync(chunks).find((f) => f.startsWith('daemon-call-'));
  const onlyChunk = join(scratch, 'daemon-call-only.mjs');
  if (chunk) writeFileSync(onlyChunk, `await import(${JSON.stringify(join(chunks, chunk))});\n`);
  // the fast path's entry imported and not run: what `run` loads before it connects
  const fastEntry = join(dirname(dirname(bin)), 'dist', 'commands', 'fast-run.js');
  const onlyFast = join(scratch, 'fast-run-only.mjs');
  const fast = existsSync(fastEntry);
  if (fast) writeFileSync(onlyFast, `await import(${JSON.stringify(fastEntry)});\n`);
  return [
    ['nodeSpawn', [process.execPath, '-e', '0']],
    ['emptyModule', [process.execPath, empty]],
    ['version', [process.execPath, bin, '--version']],
    ...(chunk ? [['chunkOnly', [process.execPath, onlyChunk]] as [string, string[]]] : []),
    ...(fast ? [['fastOnly', [process.execPath, onlyFast]] as [string, string[]]] : []),
  ];
}

function checkOutput(what: string, r: unknown): void {
  const { isError, structuredContent } = r as { isError?: unknown; structuredContent?: unknown };
  const s = structuredContent as { exitCode?: number; stdout?: string } | undefined;
  if (isError || s?.exitCode !== 0 || !s.stdout?.includes('octocat'))
    throw new Error(`${what}: ${JSON.stringify(r).slice(0, 400)}`);
}

async function main(): Promise<void> {
  const noIsolation = await isolationUnavailable();
  if (noIsolation) {
    // a daemon and a server refuse plain images: without bubblewrap there is no agent path to measure
    console.log(`agent paths: skipped, bubblewrap cannot run here: ${noIsolation}`);
    return;
  }
  if (!OTHER_BIN) await snapshotBundle();
  if (PROF) mkdirSync(PROF, { recursive: true });
  const load0 = loadavg();
  const vendor = await startMockVendor(githubVendor({ token: TOKEN }));
  const dir = configDir('clibroker-bench-agent-');
  const socketDir = join(dir.dir, 'run');
  mkdirSync(socketDir, { mode: 0o750 });
  const socket = join(socketDir, 'broker.sock');
  const stubSocket = join(socketDir, 'stub.sock');
  const tokens = { executor: randomBytes(32).toString('hex'), mcp: randomBytes(32).toString('hex') };
  // one configuration as an operator writes it; each server its own store, so no two
  // processes wait on one SQLite file
  const config = (store: string): OperatorConfig => ({
    version: 1,
    // no conformance verdict is recorded for a throwaway store
    conformance: 'optional',
    organization: { ceiling: 'write' },
    images: { gh: dir.image(GH) },
    extensions: {
      github: {
        ...dir.manifest(githubExtension([ghCli({ image: 'gh', entrypoint: GH })])),
        connection: { kind: 'oauth_access_token', accessToken: dir.secret('github', TOKEN) },
      },
    },
    store: join(dir.dir, store),
    deadlineSeconds: 60,
    daemon: { socket, socketMode: '0660', executorToken: dir.secret('executor', tokens.executor) },
    serve: { host: '127.0.0.1', port: 0, mcpToken: dir.secret('mcp', tokens.mcp) },
    upstream: dir.upstream(vendor, ['api.github.com']),
  });
  const file = (name: string, store: string): string => {
    const path = join(dir.dir, name);
    writeFileSync(path, `${JSON.stringify(config(store), null, 2)}\n`, { mode: 0o600 });
    return path;
  };
  const daemonConfig = file('daemon.json', 'daemon.db');
  const httpConfig = file('serve-http.json', 'serve-http.db');
  const stdioConfig = file('serve-stdio.json', 'serve-stdio.db');

  const certDir = join(dir.dir, 'certs');
  mkdirSync(certDir);
  const caFile = join(certDir, 'vendor-ca.pem');
  writeFileSync(caFile, vendor.caPem);
  const tunnel = await startTunnel(vendor.resolve('api.github.com'));
  const ghEnv: NodeJS.ProcessEnv = {
    PATH,
    HOME: join(dir.dir, 'home'),
    GH_CONFIG_DIR: join(dir.dir, 'gh'),
    GH_TOKEN: TOKEN,
    GH_NO_UPDATE_NOTIFIER: '1',
    GH_PROMPT_DISABLED: '1',
    HTTPS_PROXY: `http://127.0.0.1:${tunnel.port}`,
    SSL_CERT_FILE: caFile,
    SSL_CERT_DIR: certDir,
  };
  // what the platform puts in the agent's environment (docs/daemon.md)
  const agentEnv: NodeJS.ProcessEnv = {
    PATH,
    CLIBROKER_SOCKET: socket,
    CLIBROKER_EXECUTOR_TOKEN: tokens.executor,
    CLIBROKER_SURFACE: 'agent',
  };
  const agentArgvOf = (bin: string): string[] => [
    process.execPath,
    ...nodeArgs('client'),
    bin,
    'run',
    'gh_cli',
    '--',
    'api',
    'user',
  ];
  const agentArgv = agentArgvOf(BIN);
  const baseArgv = BASELINE_BIN ? agentArgvOf(BASELINE_BIN) : undefined;
  const stubEnv = { ...agentEnv, CLIBROKER_SOCKET: stubSocket };

  const servers: Server[] = [];
  const stub = await startStub(stubSocket);
  let stdio: { client: Client; transport: StdioClientTransport } | undefined;
  let http: Client | undefined;
  const fig: Record<string, number[]> = {};
  const add = (k: string, v: number): void => {
    fig[k] = [...(fig[k] ?? []), v];
  };
  // µs over the measured rounds: each server's own CPU, read from /proc
  const cpu = { daemon: 0, http: 0, stdio: 0 };
  // µs: the client processes of the stub's rows, as this process's reaped children's CPU (10 ms
  // ticks, exact enough summed over the rounds)
  const clientCpu: Record<string, number> = {};
  const addClientCpu = (k: string, us: number): void => {
    clientCpu[k] = (clientCpu[k] ?? 0) + us;
  };
  try {
    const daemon = await startServer(['daemon', '--config', daemonConfig], 'daemon');
    servers.push(daemon);
    const serveHttp = await startServer(['serve', '--config', httpConfig], 'serve');
    servers.push(serveHttp);
    http = new Client({ name: 'bench-agent-paths', version: '0' });
    await http.connect(
      new StreamableHTTPClientTransport(new URL(`${String(serveHttp.first['url'])}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${tokens.mcp}` } },
      }),
    );
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...nodeArgs('stdio'), BIN, 'serve', '--config', stdioConfig, '--mcp', 'stdio'],
      env: { PATH },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', () => {});
    stdio = { client: new Client({ name: 'bench-agent-paths', version: '0' }), transport };
    await stdio.client.connect(transport);
    const stdioPid = transport.pid!;

    /** One process under GNU time: its wall (spawn → exit here), peak, and CPU (summed, as a child reaped). */
    const measured = async (k: string, argv: string[], env: NodeJS.ProcessEnv): Promise<void> => {
      const c0 = reapedCpuMicros(process.pid);
      const p = await timed(argv, env);
      addClientCpu(k, reapedCpuMicros(process.pid) - c0);
      add(k, p.outerMs);
      add(`${k}Peak`, p.peakMiB);
    };
    const viaSocket = async (): Promise<number> => {
      const t0 = performance.now();
      const out = await callDaemon<{ exitCode: number }>(
        { socket, token: tokens.executor },
        'POST',
        ROUTES.execute,
        { toolId: 'gh_cli', input: GH_ARGS },
      );
      if (out.exitCode !== 0) throw new Error(`A socket: ${JSON.stringify(out).slice(0, 400)}`);
      return performance.now() - t0;
    };
    const mcp = async (what: string, c: Client): Promise<number> => {
      const t0 = performance.now();
      const r = await c.callTool({ name: 'gh_cli', arguments: GH_ARGS });
      const ms = performance.now() - t0;
      checkOutput(what, r);
      return ms;
    };
    const tiers = clientTiers(BIN, dir.dir);
    // with a baseline, the two builds take turns going first: what a server still does after
    // answering (the sandbox's cleanup, its log) falls on both alike
    const builds = (round: number, [mine, base]: [string, string]): [string[], string][] => {
      if (!baseArgv) return [[agentArgv, mine]];
      const both: [string[], string][] = [
        [agentArgv, mine],
        [baseArgv, base],
      ];
      return round % 2 === 0 ? both : both.reverse();
    };
    const viaStub = async (round: number): Promise<void> => {
      for (const [argv, k] of builds(round, ['stub', 'baseStub'])) {
        const c0 = reapedCpuMicros(process.pid);
        const { t0, t1 } = await spawned([...argv], stubEnv);
        addClientCpu(k, reapedCpuMicros(process.pid) - c0);
        add(k, t1 - t0);
        add(`${k}ToRequest`, stub.arrived.at(-1)! - t0);
        add(`${k}AfterAnswer`, t1 - stub.answered.at(-1)!);
      }
      // the tiers of the client's start, each spawned alike
      for (const [k, argv] of tiers) {
        const c0 = reapedCpuMicros(process.pid);
        const p = await spawned(argv, { PATH });
        addClientCpu(k, reapedCpuMicros(process.pid) - c0);
        add(k, p.t1 - p.t0);
      }
    };

    // one warm-up of each: the page cache, the stores' first writes, the servers' lazy imports
    await timed([GH, 'api', 'user'], ghEnv);
    await timed([process.execPath, '-e', '0'], { PATH });
    await timed(agentArgv, agentEnv);
    await viaSocket();
    await mcp('M stdio', stdio.client);
    await mcp('M HTTP', http);
    if (baseArgv) await timed(baseArgv, agentEnv);
    await viaStub(0);
    for (const k of Object.keys(fig)) delete fig[k];
    for (const k of Object.keys(clientCpu)) delete clientCpu[k];
    const daemonLogged = daemonDurations(daemon.stderr()).length;
    const from = monotonicMicros();

    for (let i = 0; i < rounds; i++) {
      await measured('tunnel', [GH, 'api', 'user'], ghEnv);
      await measured('node', [process.execPath, '-e', '0'], { PATH });
      let own = procCpuMicros(daemon.proc.pid!);
      for (const [argv, k] of builds(i, ['A', 'base'])) await measured(k, argv, agentEnv);
      add('aSocket', await viaSocket());
      cpu.daemon += procCpuMicros(daemon.proc.pid!) - own;

      own = procCpuMicros(stdioPid);
      add('mStdio', await mcp('M stdio', stdio.client));
      cpu.stdio += procCpuMicros(stdioPid) - own;

      own = procCpuMicros(serveHttp.proc.pid!);
      add('mHttp', await mcp('M HTTP', http));
      cpu.http += procCpuMicros(serveHttp.proc.pid!) - own;

      await viaStub(i);
    }
    if (PROF)
      writeFileSync(
        join(PROF, 'rounds.json'),
        `${JSON.stringify({ from, to: monotonicMicros(), rounds })}\n`,
      );
    // the daemon's calls of each round, in the order they were made
    const logged = daemonDurations(daemon.stderr()).slice(daemonLogged);
    const order = Array.from({ length: rounds }, (_, i) => [
      ...builds(i, ['aDaemon', 'baseDaemon']).map(([, k]) => k),
      'aSocketDaemon',
    ]).flat();
    for (let i = 0; i < logged.length; i++) add(order[i]!, logged[i]!);
  } finally {
    await http?.close().catch(() => {});
    await stdio?.client.close().catch(() => {});
    for (const s of servers) await stopChild(s.proc, () => s.proc.kill('SIGTERM'), 15_000);
    tunnel.server.close();
    await stub.close();
    await vendor.close();
    dir.remove();
  }

  const m = (k: string): number => median(fig[k] ?? []);
  const f1 = (v: number): string => (Number.isFinite(v) ? v.toFixed(1) : '—');
  const tunnelMs = m('tunnel');
  const nodeMs = m('node');
  const ratio = (v: number): string => `×${(v / tunnelMs).toFixed(2)}`;
  const perCall = (us: number, calls: number): string => f1(us / 1000 / calls);
  const daemonCalls = (baseArgv ? 3 : 2) * rounds;
  const aBudget = tunnelMs + nodeMs + 20;
  const mBudget = tunnelMs + 15;
  const goals = [
    {
      goal: `A ≤ gh via tunnel + node -e 0 + 20 ms (= ${f1(aBudget)} ms)`,
      value: `${f1(m('A'))} ms (+${f1(m('A') - tunnelMs - nodeMs)} over both)`,
      pass: m('A') <= aBudget,
    },
    {
      goal: `M stdio ≤ gh via tunnel + 15 ms (= ${f1(mBudget)} ms)`,
      value: `${f1(m('mStdio'))} ms (+${f1(m('mStdio') - tunnelMs)})`,
      pass: m('mStdio') <= mBudget,
    },
    {
      goal: `M HTTP ≤ gh via tunnel + 15 ms (= ${f1(mBudget)} ms)`,
      value: `${f1(m('mHttp'))} ms (+${f1(m('mHttp') - tunnelMs)})`,
      pass: m('mHttp') <= mBudget,
    },
  ];
  console.log(
    `\nagent paths — gh api user, ${rounds} rounds, node ${process.version}, load at start ${load0
      .map((l) => l.toFixed(2))
      .join(' ')}, at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
  console.table([
    {
      path: 'node -e 0',
      'wall ms': f1(nodeMs),
      'vs tunnel': ratio(nodeMs),
      'CPU ms': perCall(clientCpu['node'] ?? 0, rounds),
    },
    {
      path: 'gh api user via CONNECT tunnel',
      'wall ms': f1(tunnelMs),
      'vs tunnel': '×1.00',
      'CPU ms': perCall(clientCpu['tunnel'] ?? 0, rounds),
    },
    {
      path: 'A: clibroker run gh_cli -- api user',
      'wall ms': f1(m('A')),
      'vs tunnel': ratio(m('A')),
      'CPU ms': `${perCall(clientCpu['A'] ?? 0, rounds)} client + ${perCall(cpu.daemon, daemonCalls)} daemon`,
    },
    ...(baseArgv
      ? [
          {
            path: 'A, the baseline build',
            'wall ms': f1(m('base')),
            'vs tunnel': ratio(m('base')),
            'CPU ms': `${perCall(clientCpu['base'] ?? 0, rounds)} client`,
          },
        ]
      : []),
    {
      path: "  the daemon's own (its log's durationMs)",
      'wall ms': f1(m('aDaemon')),
      'vs tunnel': ratio(m('aDaemon')),
    },
    {
      path: 'A socket: the same call from this process',
      'wall ms': f1(m('aSocket')),
      'vs tunnel': ratio(m('aSocket')),
    },
    {
      path: 'M stdio: MCP tools/call',
      'wall ms': f1(m('mStdio')),
      'vs tunnel': ratio(m('mStdio')),
      'CPU ms': `${perCall(cpu.stdio, rounds)} server`,
    },
    {
      path: 'M HTTP: MCP tools/call',
      'wall ms': f1(m('mHttp')),
      'vs tunnel': ratio(m('mHttp')),
      'CPU ms': `${perCall(cpu.http, rounds)} server`,
    },
  ]);
  console.log(
    `A stub: ${f1(m('stub'))} ms, CPU ${perCall(clientCpu['stub'] ?? 0, rounds)} ms: spawn → request ${f1(m('stubToRequest'))} ms, answer → exit ${f1(m('stubAfterAnswer'))} ms`,
  );
  const tier = (k: string, what: string): string =>
    fig[k] ? `${what} ${f1(m(k))} ms (CPU ${perCall(clientCpu[k] ?? 0, rounds)})` : `${what}: —`;
  console.log(
    `the client's start, spawned alike: ${[
      tier('nodeSpawn', 'node -e 0'),
      tier('emptyModule', 'an empty ES module'),
      tier('version', 'clibroker --version'),
      tier('chunkOnly', "only the router path's daemon client chunk imported"),
      tier('fastOnly', "only the fast path's entry imported"),
    ].join(', ')}`,
  );
  if (baseArgv)
    console.log(
      `A stub, the baseline build: ${f1(m('baseStub'))} ms, CPU ${perCall(clientCpu['baseStub'] ?? 0, rounds)} ms: spawn → request ${f1(m('baseStubToRequest'))} ms, answer → exit ${f1(m('baseStubAfterAnswer'))} ms`,
    );
  console.log(
    `A less A socket (the client process): ${f1(m('A') - m('aSocket'))} ms; A socket less the daemon's own: ${f1(m('aSocket') - m('aSocketDaemon'))} ms; M stdio less A socket (an MCP door's own): ${f1(m('mStdio') - m('aSocket'))} ms, M HTTP less A socket: ${f1(m('mHttp') - m('aSocket'))} ms; client peak ${f1(m('APeak'))} MiB (node -e 0 ${f1(m('nodePeak'))} MiB)`,
  );
  for (const g of goals) console.log(`${g.pass ? 'pass' : 'FAIL'}  ${g.goal}: ${g.value}`);
  console.log(
    JSON.stringify({
      scenario: 'agent-paths',
      rounds,
      load: { start: load0, end: loadavg() },
      medians: Object.fromEntries(Object.keys(fig).map((k) => [k, m(k)])),
      cpuPerCallMs: {
        ...Object.fromEntries(Object.entries(clientCpu).map(([k, us]) => [k, us / 1000 / rounds])),
        daemon: cpu.daemon / 1000 / daemonCalls,
        stdio: cpu.stdio / 1000 / rounds,
        http: cpu.http / 1000 / rounds,
      },
      goals,
    }),
  );
}

await main();
