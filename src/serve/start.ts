import { type ServeOptions, serveUntilSignal } from '../front/start.js';
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
  const run = await serveUntilSignal(configFile, opts, {
    event: 'serve',
    start(config, host, logger) {
      const s = config.serve;
      return startHttpServer(host, host.store, {
        host: opts.host ?? s.host,
        port: opts.port ?? s.port,
        ...(s.publicUrl ? { publicUrl: s.publicUrl } : {}),
        tokens: () => config.serveTokens(),
        approvalTimeoutMs: s.approvalTimeoutMs,
        mcp: { cliTier: s.cliTier, context: s.context, tierSource: 'serve.cliTier' },
        executorMaxTier: s.executorMaxTier,
        reviewSessions: { idleMs: s.reviewSessionIdleMs, maxMs: s.reviewSessionMaxMs },
        logger,
      });
    },
    listening: (server) => ({ url: server.url }),
  });
  return { status: 'stopped', url: run.server.url, signal: run.signal, uptimeMs: run.uptimeMs };
}
