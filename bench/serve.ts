/**
 * `npm run bench:serve`: what `clibroker serve` adds to a tools/call.
 *
 *   front door   a host whose runTool answers at once, called in-process and through MCP
 *                Streamable HTTP (the SDK's client, the server's auth, session, hold and
 *                envelope): the p50 difference is the server's own cost per call
 *   real runs    `gh api user` against the mock vendor, isolated, through host.runTool (the
 *                library: runner.run behind the host's checks) and through MCP, interleaved
 *   concurrency  20 concurrent tools/call from one MCP client, each its own governed run
 *
 * Budget: the front door's added p50 ≤ 5 ms; all 20 concurrent calls complete.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ToolHost, ToolOutput } from '../src/host/types.js';
import { startHttpServer } from '../src/serve/http.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import { serveFixture, TOKENS } from '../tests/serve/helpers.js';
import { quantile } from './lib/stats.js';

const N = Number(process.env['BENCH_N'] ?? 200);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 20);
const log = (msg: string): void => void process.stderr.write(`${msg}\n`);
const ms = (x: number): number => Math.round(x * 100) / 100;

async function mcpClient(url: string): Promise<Client> {
  const c = new Client({ name: 'bench', version: '0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${TOKENS.mcp}` } },
    }),
  );
  return c;
}

async function time(f: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
}

/** A host that does no work: what remains of a call is the front door. */
function noopHost(): ToolHost {
  const out: ToolOutput = {
    exitCode: 0,
    stdout: '{"login":"octocat"}',
    stderr: '',
    truncated: false,
    runId: 'bench',
    cliTier: 'read',
    cliTierReason: 'requested',
  };
  return {
    tools: () => [{ id: 'x:cli:x', name: 'x_cli', description: 'x', inputSchema: { type: 'object' } }],
    runTool: async () => ({ ...out }),
    resume: async () => ({ ...out }),
    approve: () => Promise.reject(new Error('no')),
    reject: () => Promise.reject(new Error('no')),
    close: async () => {},
  };
}

async function frontDoor() {
  const host = noopHost();
  const store = await openSqliteStore(':memory:');
  const server = await startHttpServer(host, store, {
    port: 0,
    tokens: async () => ({ mcp: TOKENS.mcp, reviewers: [] }),
    approvalTimeoutMs: 1000,
    mcp: { cliTier: 'read', context: 'agent-step' },
  });
  const client = await mcpClient(server.url);
  const lib: number[] = [];
  const mcp: number[] = [];
  const args = { args: ['api', 'user'] };
  for (let i = 0; i < 20; i++) await client.callTool({ name: 'x_cli', arguments: args }); // warm
  for (let i = 0; i < N; i++) {
    lib.push(await time(() => host.runTool('x_cli', args)));
    mcp.push(await time(() => client.callTool({ name: 'x_cli', arguments: args })));
  }
  await client.close();
  await server.close();
  await store.close();
  return { lib: quantile(lib, 0.5), mcp: quantile(mcp, 0.5), mcpP95: quantile(mcp, 0.95) };
}

async function realRuns() {
  const f = await serveFixture();
  try {
    const client = await mcpClient(f.url);
    const args = { args: ['api', 'user'] };
    const lib: number[] = [];
    const mcp: number[] = [];
    await f.host.runTool('gh_cli', args);
    for (let i = 0; i < RUNS; i++) {
      lib.push(await time(() => f.host.runTool('gh_cli', args, { cliTier: 'write', context: 'agent-step' })));
      mcp.push(await time(() => client.callTool({ name: 'gh_cli', arguments: args })));
    }
    const t0 = performance.now();
    const all = await Promise.all(
      Array.from({ length: 20 }, () => client.callTool({ name: 'gh_cli', arguments: args })),
    );
    const concurrentMs = performance.now() - t0;
    const ok = all.filter((r) => !r.isError && (r.structuredContent as ToolOutput).exitCode === 0).length;
    const runIds = new Set(all.map((r) => (r.structuredContent as ToolOutput).runId)).size;
    await client.close();
    return { lib: quantile(lib, 0.5), mcp: quantile(mcp, 0.5), ok, runIds, concurrentMs };
  } finally {
    await f.stop();
    await f.d.close();
  }
}

const door = await frontDoor();
log(
  `front door (${N} calls): library p50 ${ms(door.lib)} ms, MCP over HTTP p50 ${ms(door.mcp)} ms (p95 ${ms(door.mcpP95)})`,
);
const real = await realRuns();
log(`gh api user (${RUNS} each, interleaved): library p50 ${ms(real.lib)} ms, MCP p50 ${ms(real.mcp)} ms`);
log(`20 concurrent calls: ${real.ok}/20 completed, ${real.runIds} runs, ${Math.round(real.concurrentMs)} ms`);
const added = door.mcp - door.lib;
const result = {
  frontDoorAddedP50Ms: ms(added),
  frontDoorBudgetMs: 5,
  withinBudget: added <= 5,
  realRunLibraryP50Ms: ms(real.lib),
  realRunMcpP50Ms: ms(real.mcp),
  concurrentCompleted: real.ok,
  concurrentRuns: real.runIds,
};
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exitCode = result.withinBudget && real.ok === 20 && real.runIds === 20 ? 0 : 1;
