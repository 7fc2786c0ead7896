/**
 * `clibroker daemon --config <file>`: the operator's command that serves the configured
 * tools to `clibroker run` over a unix socket (docs/daemon.md). Never offered to agents
 * (`PERSON_ONLY_TOOLS`). The daemon (config loader, host, broker, store) loads only when it runs.
 */
import { defineTool } from '../cli/define.js';

export const daemon = defineTool({
  name: 'daemon',
  description: [
    "Serve the configuration's tools to clibroker run over the unix socket its daemon block names, until SIGTERM or SIGINT (the operator's command).",
    'Prints one JSON line when it listens ({event: "daemon.listening", socket, pid, tools, withheld}); logs go to stderr.',
    'A configuration with any problem is refused whole (CONFIG_INVALID, details.problems); a socket another daemon listens on is DAEMON_SOCKET_IN_USE.',
    "A socket directory (or a non-sticky parent) that a user other than the daemon's and root could write is DAEMON_SOCKET_DIR_UNSAFE; nothing starts.",
  ].join('\n'),
  parameters: {
    config: { type: 'string', describe: 'the operator configuration file (JSON; docs/config.md)' },
  },
  examples: [
    {
      params: { config: '/etc/clibroker/config.json' },
      comment: 'run as the daemon user, e.g. from a systemd unit',
    },
  ],
  outputShape: "{status: 'stopped', socket, signal, uptimeMs}",
  async run(p) {
    const { serveDaemon } = await import('../daemon/serve.js');
    return serveDaemon(p.config);
  },
});
