/**
 * `clibroker daemon --config <file>`: load the operator's configuration, create its host,
 * serve it on the configured socket until SIGTERM or SIGINT, then stop in order (the socket
 * first, running calls given their grace, the host last). Run by the operator as the
 * daemon's own user; the configuration and its secrets never leave this process.
 */
import type { Logger } from 'pino';
import { createLogger } from '../audit/logger.js';
import { loadConfig } from '../config/load.js';
import { brokerError } from '../errors.js';
import type { LoadedConfig } from '../config/types.js';
import { createHost, type Host } from '../host/host.js';
import { startDaemon } from './server.js';
import { checkSocketDir } from './socket.js';

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

/** How the daemon ended. */
export interface Stopped {
  status: 'stopped';
  socket: string;
  signal: string;
  uptimeMs: number;
}

/**
 * Serve until a signal. The configuration must have a `daemon` block.
 * @throws BrokerError CONFIG_INVALID (the loader's problems, no daemon block, or a socket path
 *   that cannot be used), DAEMON_SOCKET_DIR_UNSAFE (a user other than the daemon's and root could
 *   replace the socket: nothing is created), DAEMON_SOCKET_IN_USE
 */
export async function serveDaemon(configFile: string, opts: ServeOptions = {}): Promise<Stopped> {
  const run = await serveUntilSignal(configFile, opts, {
    event: 'daemon',
    async check(config) {
      // the socket's directory before the host: a daemon that cannot serve safely opens no store
      if (config.daemon) return checkSocketDir(config.daemon.socket);
      throw brokerError(
        'CONFIG_INVALID',
        { problem: 'no-daemon-block' },
        {
          details: {
            problems: [
              {
                path: 'daemon',
                code: 'CONFIG_FIELD_INVALID',
                message: 'missing: {"socket": "/run/clibroker/broker.sock"}',
              },
            ],
          },
        },
      );
    },
    start(config, host, logger) {
      const d = config.daemon!;
      return startDaemon(host, {
        socket: d.socket,
        socketMode: Number.parseInt(d.socketMode, 8),
        cliTier: d.cliTier,
        context: d.context,
        executorToken: () => config.executorToken(),
        logger,
      });
    },
    listening: (daemon) => ({ socket: daemon.socket }),
  });
  return { status: 'stopped', socket: run.server.socket, signal: run.signal, uptimeMs: run.uptimeMs };
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
