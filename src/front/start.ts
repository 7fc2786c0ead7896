/**
 * The start and stop both front doors share (the daemon, `clibroker serve`): the logger, the
 * configuration loaded as a server loads it, the host, the door's server, one listening line
 * once the signal handlers are set, then on SIGTERM or SIGINT the server closed before the host.
 */
import type { Logger } from 'pino';
import { createLogger } from '../audit/logger.js';
import { loadConfig } from '../config/load.js';
import type { LoadedConfig } from '../config/types.js';
import { createHost, type Host } from '../host/host.js';

/** How a front door is started: where its listening line goes, its logger, its signals. */
export interface ServeOptions {
  /** where the one "listening" line goes; default stdout */
  out?: (line: string) => void;
  /** default: JSON lines on stderr */
  logger?: Logger;
  signals?: readonly NodeJS.Signals[];
  /**
   * Serve a configuration whose images are plain: loaded without the serving check, the host
   * started with `allowPlainProfile`. Only `serve --demo` sets it, where bubblewrap cannot run
   * (after a printed warning); no flag or configuration field reaches it.
   * @internal
   */
  allowPlainProfile?: true;
}

/** What a front door (the daemon, `clibroker serve`) adds to the shared start and stop. */
export interface FrontDoor<S extends { close(): Promise<void> }> {
  /** names its `<event>.listening` and `<event>.stopping` lines */
  event: 'daemon' | 'serve';
  /** refuses a configuration this front door cannot serve, before the host is created */
  check?: (config: LoadedConfig) => void | Promise<void>;
  /** starts listening on the host */
  start: (config: LoadedConfig, host: Host, logger: Logger) => Promise<S>;
  /** where it listens, for the listening line */
  listening: (server: S) => Record<string, unknown>;
}

/**
 * The start and stop every front door shares: the logger, the configuration (loaded as a
 * server loads it), the host, the server, one listening line once the signal handlers are
 * set, then on SIGTERM or SIGINT the server closed before the host.
 */
export async function serveUntilSignal<S extends { close(): Promise<void> }>(
  configFile: string,
  opts: ServeOptions,
  door: FrontDoor<S>,
): Promise<{ server: S; signal: string; uptimeMs: number }> {
  const started = Date.now();
  const out = opts.out ?? ((line: string) => void process.stdout.write(line));
  const logger =
    opts.logger ?? createLogger({}, (await import('pino')).pino.destination({ dest: 2, sync: true }));
  const plain = opts.allowPlainProfile === true;
  const config = await loadConfig(configFile, plain ? {} : { serving: true });
  await door.check?.(config);
  const host = await createHost(config, plain ? { logger, allowPlainProfile: true } : { logger });
  let server: S;
  try {
    server = await door.start(config, host, logger);
  } catch (e) {
    await host.close();
    throw e;
  }
  const signal = await untilSignal(opts.signals ?? ['SIGTERM', 'SIGINT'], () =>
    out(
      `${JSON.stringify({
        event: `${door.event}.listening`,
        ...door.listening(server),
        pid: process.pid,
        tools: host.tools().map((t) => t.name),
        withheld: host.withheld().map((w) => ({ name: w.name, code: w.code })),
      })}\n`,
    ),
  );
  logger.info({ event: `${door.event}.stopping`, signal }, `${door.event} stopping`);
  await server.close();
  await host.close();
  return { server, signal, uptimeMs: Date.now() - started };
}

/**
 * Waits for the first of `signals`. `listening` runs once the handlers are in place, so a
 * supervisor that reads the listening line and signals at once is never lost.
 */
export function untilSignal(signals: readonly NodeJS.Signals[], listening: () => void): Promise<string> {
  return new Promise<string>((resolve) => {
    const handlers = signals.map((s) => {
      const h = (): void => {
        for (const [sig, fn] of handlers) process.off(sig, fn);
        resolve(s);
      };
      process.on(s, h);
      return [s, h] as const;
    });
    listening();
  });
}
