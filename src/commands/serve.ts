/**
 * `clibroker serve --config <file> [--port N]`: the operator's command that serves the
 * configuration's `<id>_cli` tools over HTTP (Platform API, MCP at /mcp, the review page);
 * with `--mcp stdio`, to one MCP client on this process's stdin and stdout (docs/serve.md). Never offered to agents: it holds the configuration and its secrets. The
 * server (SDK, config loader, host) loads only when it runs.
 */
import { OWNS_STDOUT, defineTool } from '../cli/define.js';
import { fail } from '../cli/envelope.js';

export const serve = defineTool({
  name: 'serve',
  description: [
    'Serve the configuration\'s tools over HTTP on 127.0.0.1 (serve.host, serve.port or --port, default 8787) until SIGTERM/SIGINT: the Platform API (/v1, /openapi.json), MCP Streamable HTTP at /mcp and the reviewer page /review, each with its own token (serve.executorToken, serve.mcpToken, serve.reviewers). Prints one JSON line when it listens ({event: "serve.listening", url, pid, tools, withheld}); logs go to stderr.',
    'With --mcp stdio: MCP on stdin/stdout until the client closes stdin (an MCP host launches it); stdout carries only the protocol. MCP calls run at serve.cliTier/serve.context, else daemon.cliTier/daemon.context, else read and agent-step.',
    'A configuration with any problem is refused whole before serving (CONFIG_INVALID, details.problems, as the usual failure envelope).',
    'With --demo instead of --config: a throwaway server to try, offline — an embedded GitHub-like mock vendor, gh and curl from /usr/bin at tier write, fresh random tokens and a SQLite store in a 0700 temp directory (removed when it stops). After the listening line it prints the MCP endpoint, a ready curl for the Platform API, the reviewer page and the tokens: printed because it is a throwaway demo, always bound to 127.0.0.1.',
  ].join('\n'),
  parameters: {
    config: {
      type: 'string',
      optional: true,
      describe: 'the operator configuration file (JSON; docs/config.md); required unless --demo',
    },
    demo: {
      type: 'boolean',
      optional: true,
      describe:
        'serve a throwaway demo deployment on 127.0.0.1 (mock vendor, printed tokens) instead of --config',
    },
    mcp: {
      type: 'enum',
      values: ['stdio'],
      optional: true,
      describe: 'stdio: MCP on stdin/stdout instead of the HTTP server',
    },
    port: {
      type: 'number',
      integer: true,
      min: 0,
      max: 65535,
      optional: true,
      describe: 'the HTTP port (default serve.port, else 8787; 0 picks a free one)',
    },
  },
  examples: [
    {
      params: { config: '/etc/clibroker/config.json' },
      comment: 'the HTTP server on 127.0.0.1:8787, run as the user the configuration belongs to',
    },
    {
      params: { config: '/etc/clibroker/config.json', mcp: 'stdio' },
      comment: "the command an MCP host's configuration runs",
    },
    {
      params: { demo: true },
      comment: 'try the server offline: prints the endpoints and the tokens to use, stops on Ctrl-C',
    },
  ],
  outputShape: "HTTP: {status: 'stopped', url, signal, uptimeMs}; stdio: nothing (stdout is the MCP session)",
  async run(p) {
    if (p.demo === true) {
      if (p.config !== undefined)
        fail('flag-parse', '--demo writes a configuration of its own: leave out --config', {
          code: 'COMMAND_INPUT_INVALID',
          flag: 'config',
          fix: ['--demo', ...(p.port !== undefined ? ['--port', String(p.port)] : [])],
        });
      if (p.mcp !== undefined)
        fail('flag-parse', '--demo serves HTTP only: leave out --mcp', {
          code: 'COMMAND_INPUT_INVALID',
          flag: 'mcp',
          fix: ['--demo', ...(p.port !== undefined ? ['--port', String(p.port)] : [])],
        });
      const { serveDemo } = await import('./serve-demo.js');
      return serveDemo(p.port);
    }
    if (p.config === undefined)
      fail('missing-required', 'serve needs --config <file> (or --demo to try it)', {
        code: 'COMMAND_INPUT_INVALID',
        flag: 'config',
        expected: '/etc/clibroker/config.json',
      });
    if (p.mcp === 'stdio') {
      const { serveStdio } = await import('../serve/stdio.js');
      await serveStdio(p.config);
      return OWNS_STDOUT;
    }
    const { serveHttp } = await import('../serve/start.js');
    return serveHttp(p.config, p.port !== undefined ? { port: p.port } : {});
  },
});
