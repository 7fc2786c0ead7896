import { createLogger } from '../audit/logger.js';
import { loadConfig } from '../config/load.js';
import { type ServeOptions, untilSignal } from '../daemon/serve.js';
import { createHost } from '../host/host.js';
import { startHttpServer } from './http.js';

/** The daemon's options (the listening line, the logger, the signals), and where to listen. */
export interface ServeHttpOptions extends ServeOptions {
  /** overrides serve.port */
  port?: number;
  /** overrides serve.host */
  host?: string;
}

export interface ServeStopped {
  status: 'stopped';
  url: string;
  signal: string;
  uptimeMs: number;
}

/** @throws BrokerError CONFIG_INVALID (the loader's problems); the listen error (EADDRINUSE) as it is */
export async function serveHttp(configFile: string, opts: ServeHttpOptions = {}): Promise<ServeStopped> {
  const started = Date.now();
  const out = opts.out ?? ((line: string) => void process.stdout.write(line));
  const logger =
    opts.logger ?? createLogger({}, (await import('pino')).pino.destination({ dest: 2, sync: true }));
  const config = await loadConfig(configFile, { serving: true });
  const host = await createHost(config, { logger });
  let server: Awaited<ReturnType<typeof startHttpServer>>;
  try {
    const s = config.serve;
    server = await startHttpServer(host, host.store, {
      host: opts.host ?? s.host,
      port: opts.port ?? s.port,
      ...(s.publicUrl ? { publicUrl: s.publicUrl } : {}),
      tokens: () => config.serveTokens(),
      approvalTimeoutMs: s.approvalTimeoutMs,
      mcp: { cliTier: s.cliTier, context: s.context },
      logger,
    });
  } catch (e) {
    await host.close();
    throw e;
  }
  const signal = await untilSignal(opts.signals ?? ['SIGTERM', 'SIGINT'], () =>
    out(
      `${JSON.stringify({
        event: 'serve.listening',
        url: server.url,
        pid: process.pid,
        tools: host.tools().map((t) => t.name),
        withheld: host.withheld().map((w) => ({ name: w.name, code: w.code })),
      })}\n`,
    ),
  );
  logger.info({ event: 'serve.stopping', signal }, 'serve stopping');
  await server.close();
  await host.close();
  return { status: 'stopped', url: server.url, signal, uptimeMs: Date.now() - started };
}
