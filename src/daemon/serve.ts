/**
 * `clibroker daemon --config <file>`: load the operator's configuration, create its host,
 * serve it on the configured socket until SIGTERM or SIGINT, then stop in order (the socket
 * first, running calls given their grace, the host last). Run by the operator as the
 * daemon's own user; the configuration and its secrets never leave this process.
 */
import { brokerError } from '../errors.js';
import { type ServeOptions, serveUntilSignal } from '../front/start.js';
import { startDaemon } from './server.js';
import { checkSocketDir } from './socket.js';

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

export type { ServeOptions } from '../front/start.js';
