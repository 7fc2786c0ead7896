/**
 * `clibroker serve --config <file> --mcp stdio`: load the operator's configuration, create
 * its host and speak MCP on this process's stdin and stdout until the client closes stdin
 * (or SIGTERM/SIGINT). stdout carries the protocol and nothing else: logs go to stderr.
 */
import type { Logger } from 'pino';
import { createLogger } from '../audit/logger.js';
import { loadConfig } from '../config/load.js';
import { createHost } from '../host/host.js';
import { createHolder } from './hold.js';
import { serveMcp } from './mcp.js';

export interface ServeStdioOptions {
  /** default: JSON lines on stderr */
  logger?: Logger;
  signals?: readonly NodeJS.Signals[];
}

/**
 * Serve until the client goes away. The tier and the context are the configuration's
 * `serve.cliTier` / `serve.context`, else `daemon.cliTier` / `daemon.context`, else read and agent-step.
 * @throws BrokerError CONFIG_INVALID (the loader's problems) — before anything is written to stdout
 */
export async function serveStdio(configFile: string, opts: ServeStdioOptions = {}): Promise<void> {
  const logger =
    opts.logger ?? createLogger({}, (await import('pino')).pino.destination({ dest: 2, sync: true }));
  const config = await loadConfig(configFile, { serving: true });
  const host = await createHost(config, { logger });
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const transport = new StdioServerTransport();
  // the SDK's transport does not watch for the end of its input: the client closing stdin
  // ends the session, once the calls it already sent are answered; a signal stops reading
  // and ends it the same way (a call's duration is bounded by the configuration's deadline)
  let ended: () => void = () => {};
  const inputEnded = new Promise<void>((r) => {
    ended = r;
  });
  const stop = (): void => {
    process.stdin.pause();
    ended();
  };
  const signals = opts.signals ?? ['SIGTERM', 'SIGINT'];
  for (const s of signals) process.on(s, stop);
  process.stdin.once('end', ended);
  try {
    logger.info(
      {
        event: 'serve.mcp.started',
        tools: host.tools().map((t) => t.name),
        withheld: host.withheld().map((w) => w.name),
      },
      'serving MCP on stdio',
    );
    const callOpts = {
      cliTier: config.serve.cliTier,
      context: config.serve.context,
      tierSource: 'serve.cliTier' as const,
    };
    // a call runs as through the HTTP server's doors, with the SDK's signal of the call: a
    // cancelled call (notifications/cancelled) kills the run's process group and is audited
    // SERVE_CALL_CANCELLED. The holder is stopped from the start: over stdio nothing waits
    // for a person, a destructive request answers CLI_APPROVAL_PENDING.
    const holder = createHolder(host, host.store, { approvalTimeoutMs: 0, reviewUrl: '', logger });
    holder.stop();
    await serveMcp(host, transport, {
      ...callOpts,
      inputEnded,
      call: (tool, args, ctx) => holder.run(tool, args, callOpts, { signal: ctx.signal }),
    });
  } finally {
    for (const s of signals) process.off(s, stop);
    process.stdin.off('end', ended);
    logger.info({ event: 'serve.mcp.stopped' }, 'MCP session ended');
    await host.close();
  }
}
