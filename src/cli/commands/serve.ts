/**
 * `clibroker serve --config <file> --mcp stdio`: the operator's command that offers the
 * configuration's `<id>_cli` tools to an MCP client on this process's stdin and stdout
 * (docs/serve.md). Never offered to agents: it holds the configuration and its secrets. The
 * server (SDK, config loader, host) loads only when it runs.
 */
import { OWNS_STDOUT, defineTool } from '../define.js';

export const serve = defineTool({
  name: 'serve',
  description: [
    "Serve the configuration's tools over MCP on stdin/stdout until the client closes stdin, or SIGTERM/SIGINT (the operator's command; an MCP host launches it).",
    'stdout carries only the protocol (no envelope while serving); logs go to stderr. The tier and context are daemon.cliTier/daemon.context when the configuration has them, else read and agent-step.',
    'A configuration with any problem is refused whole before serving (CONFIG_INVALID, details.problems, as the usual failure envelope).',
  ].join('\n'),
  parameters: {
    config: { type: 'string', describe: 'the operator configuration file (JSON; docs/config.md)' },
    mcp: { type: 'enum', values: ['stdio'], describe: 'the MCP transport: stdio (the only one so far)' },
  },
  examples: [
    {
      params: { config: '/etc/clibroker/config.json', mcp: 'stdio' },
      comment: "the command an MCP host's configuration runs",
    },
  ],
  outputShape: 'nothing: stdout is the MCP session',
  async run(p) {
    const { serveStdio } = await import('../../serve/stdio.js');
    await serveStdio(p.config);
    return OWNS_STDOUT;
  },
});
