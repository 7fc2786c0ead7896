/**
 * The HTTP server of `clibroker serve` over the seed deployment (gh, curl, az pinned and
 * isolated, the mock vendor answering), started in-process on a free port of 127.0.0.1 the
 * way `serveHttp` starts it: loadConfig → createHost → startHttpServer. Tokens are secret
 * files like every other secret; the helpers speak plain HTTP with fetch.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createLogger } from '../../src/audit/logger.js';
import { loadConfig } from '../../src/config/load.js';
import type { OperatorConfig } from '../../src/config/types.js';
import { createHost, type Host } from '../../src/host/host.js';
import { type HttpServer, startHttpServer } from '../../src/serve/http.js';
import { serveHttp } from '../../src/serve/start.js';
import type { ConfigDir } from '../helpers/config.js';
import { type SeedDeployment, seedDeployment } from '../helpers/seed.js';

// biome-ignore lint/suspicious/noExplicitAny: tests read JSON answers freely
export type Json = any;

export const TOKENS = {
  executor: 'exec-token-0123456789abcdef0123456789',
  mcp: 'mcp-token-0123456789abcdef0123456789ab',
  alice: 'alice-review-token-0123456789abcdef01',
  bob: 'bob-review-token-0123456789abcdef0123',
} as const;

export interface ServeFixture {
  d: SeedDeployment;
  host: Host;
  server: HttpServer;
  url: string;
  /** a JSON request; `token` undefined sends no Authorization */
  call(method: string, path: string, token?: string, body?: unknown): Promise<{ status: number; json: Json }>;
  /** the pending approvals, once there is at least `n` */
  pending(n?: number): Promise<Json[]>;
  deletes(): number;
  /** stop the server and the host (idempotent) */
  stop(): Promise<void>;
  /** a new server and host over the same configuration and store */
  restart(): Promise<ServeFixture>;
  /** another server and host over the same configuration and store, beside this one (a replica) */
  replica(): Promise<ServeFixture>;
}

export interface ServeOptions {
  approvalTimeoutMs?: number;
  over?: (c: OperatorConfig) => OperatorConfig;
}

/** The seed deployment with a serve block, gh allowed to write by the operator's switch. */
export async function serveFixture(opts: ServeOptions = {}): Promise<ServeFixture> {
  const d = await seedDeployment((c, dir) =>
    (opts.over ?? ((x) => x))({
      ...c,
      serve: {
        port: 0,
        executorToken: dir.secret('executor', TOKENS.executor),
        mcpToken: dir.secret('mcp', TOKENS.mcp),
        reviewers: { alice: dir.secret('alice', TOKENS.alice), bob: dir.secret('bob', TOKENS.bob) },
        cliTier: 'write',
        approvalTimeoutSeconds: 600,
      },
    }),
  );
  const f = await start(d, opts);
  await raiseGithub(f.host);
  return f;
}

/** A person raises the allow switch of every github CLI (each tool has its own) in the default assignment. */
async function raiseGithub(host: Host): Promise<void> {
  for (const cli of host.config.extensions.get('github')?.manifest.clis ?? [])
    await host.store.setAssignmentTier({
      extensionId: 'github',
      assignmentId: 'default',
      cliId: cli.id,
      tier: 'write',
      who: 'admin@example.com',
    });
}

async function start(d: SeedDeployment, opts: ServeOptions): Promise<ServeFixture> {
  const config = await loadConfig(d.file);
  const host = await createHost(config);
  const server = await startHttpServer(host, host.store, {
    host: '127.0.0.1',
    port: 0,
    tokens: () => config.serveTokens(),
    approvalTimeoutMs: opts.approvalTimeoutMs ?? config.serve.approvalTimeoutMs,
    mcp: { cliTier: config.serve.cliTier, context: config.serve.context },
    pollMs: 100,
    progressIntervalMs: 300,
  });
  let stopped: Promise<void> | undefined;
  const f: ServeFixture = {
    d,
    host,
    server,
    url: server.url,
    async call(method, path, token, body) {
      const r = await fetch(`${server.url}${path}`, {
        method,
        headers: {
          ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      });
      const text = await r.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = { text };
      }
      return { status: r.status, json };
    },
    async pending(n = 1) {
      for (let i = 0; i < 600; i++) {
        const r = await f.call('GET', '/v1/approvals?status=pending', TOKENS.alice);
        if (r.json.ok && r.json.result.approvals.length >= n) return r.json.result.approvals;
        await new Promise((res) => setTimeout(res, 100));
      }
      throw new Error('no pending approval appeared');
    },
    deletes: () => d.vendor.log.filter((r) => r.method === 'DELETE').length,
    stop() {
      stopped ??= (async () => {
        await server.close();
        await host.close();
      })();
      return stopped;
    },
    async restart() {
      await f.stop();
      return start(d, opts);
    },
    replica: () => start(d, opts),
  };
  return f;
}

/** The signal `serveFromConfig` stops its server with. */
const SIGNAL = 'SIGUSR2';

/**
 * `clibroker serve` as it starts from a configuration file (serveHttp: the loader's defaults and
 * the start's wiring), over a seed deployment whose serve block `serve` writes, with the
 * assignment's switch raised to write before the server starts. Stop it with `stop()`.
 */
export async function serveFromConfig(
  serve: (dir: ConfigDir) => OperatorConfig['serve'],
): Promise<{ d: SeedDeployment; url: string; stop(): Promise<void> }> {
  const d = await seedDeployment((c, dir) => ({ ...c, serve: serve(dir) }));
  // the assignment's switch, raised by a person before the server starts
  const host = await createHost(await loadConfig(d.file));
  await raiseGithub(host);
  await host.close();
  let listened!: (url: string) => void;
  const listening = new Promise<string>((resolve) => {
    listened = resolve;
  });
  const stopped = serveHttp(d.file, {
    port: 0,
    signals: [SIGNAL],
    out: (line) => listened(String(JSON.parse(line).url)),
    logger: createLogger({ level: 'silent' }),
  });
  const url = await Promise.race([
    listening,
    stopped.then((s) => {
      throw new Error(`stopped before listening: ${JSON.stringify(s)}`);
    }),
  ]);
  return {
    d,
    url,
    async stop() {
      process.kill(process.pid, SIGNAL);
      await stopped;
      await d.close();
    },
  };
}

/**
 * The SDK's own MCP client over stdio, launching `clibroker serve --config <file> --mcp stdio`
 * from the built binary as an MCP host does (only PATH in its environment); the server's
 * stderr is collected. Connect it with `client.connect(transport)`.
 */
export function stdioClient(
  bin: string,
  configFile: string,
): { client: Client; transport: StdioClientTransport; stderr: () => string } {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, 'serve', '--config', configFile, '--mcp', 'stdio'],
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (c) => {
    stderr += c;
  });
  return {
    client: new Client({ name: 'clibroker-test', version: '0.0.0' }),
    transport,
    stderr: () => stderr,
  };
}
