/**
 * The configured `<id>_cli` tools over the Model Context Protocol (the official SDK's
 * low-level `Server`): `tools/list` is `host.tools()`, `tools/call` is `host.runTool` with the
 * operator's tier and context. The agent's arguments are passed to the host as they came; the
 * host checks them strictly (`INVALID_TOOL_INPUT`), so nothing of the call options can ride in.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { frontDetails } from '../front/wire.js';
import { BrokerError, isBrokerError } from '../errors.js';
import type { CallOptions, ToolHost, ToolOutput } from '../host/types.js';

/** What a tool call may tell the client while it runs, and how it learns it was cancelled. */
export interface McpCallContext {
  /** aborted when the client cancels the call (notifications/cancelled) or its session ends */
  signal: AbortSignal;
  /** a progress notification, when the client asked for them (a progressToken); else nothing */
  progress(message: string): void;
}

export interface McpOptions extends CallOptions {
  /** the server's name and version in the MCP handshake */
  name?: string;
  version?: string;
  /** runs a call instead of `host.runTool` (the HTTP server holds approvals in it) */
  call?: (tool: string, args: unknown, ctx: McpCallContext) => Promise<ToolOutput>;
}

/** The text of a failure is capped: an agent reads the code and `structuredContent.error`. */
const MAX_ERROR_TEXT = 4096;

/** A failure as an MCP tool result: the catalogue's code, the host's (secret-free) message and details. */
export function errorResult(e: unknown): CallToolResult {
  const err = isBrokerError(e) ? e : new BrokerError('INTERNAL_ERROR');
  const text = err.message.startsWith(err.code) ? err.message : `${err.code}: ${err.message}`;
  const details = frontDetails(err.details);
  return {
    isError: true,
    content: [
      { type: 'text', text: text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text },
    ],
    structuredContent: {
      error: { code: err.code, message: err.message, ...(details ? { details } : {}) },
    },
  };
}

/** The MCP server of a host, not yet connected, and a way to wait for the answers it owes. */
export function mcpServer(
  host: ToolHost,
  opts: McpOptions = {},
): { server: Server; settled(): Promise<void> } {
  const pending = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    pending.add(p);
    void p.finally(() => pending.delete(p)).catch(() => {});
    return p;
  };
  const server = new Server(
    { name: opts.name ?? 'clibroker', version: opts.version ?? '0.1.0' },
    { capabilities: { tools: {} } },
  );
  const call: CallOptions = {
    ...(opts.cliTier ? { cliTier: opts.cliTier } : {}),
    ...(opts.context ? { context: opts.context } : {}),
    ...(opts.tierSource ? { tierSource: opts.tierSource } : {}),
  };
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: host.tools().map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema as { type: 'object' },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, (req, extra) => {
    const token = req.params._meta?.progressToken;
    let step = 0;
    const ctx: McpCallContext = {
      signal: extra.signal,
      progress(message) {
        if (token === undefined || extra.signal.aborted) return;
        step += 1;
        void extra
          .sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: step, message },
          })
          .catch(() => {});
      },
    };
    return track(callTool(req.params.name, req.params.arguments, ctx));
  });
  async function callTool(name: string, args: unknown, ctx: McpCallContext): Promise<CallToolResult> {
    try {
      // `arguments` absent is passed as absent: the host refuses it (INVALID_TOOL_INPUT), never a default
      // the client's cancel reaches the run: its process group is killed at once
      const output = opts.call
        ? await opts.call(name, args, ctx)
        : await host.runTool(name, args, call, { signal: ctx.signal });
      return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: { ...output } };
    } catch (e) {
      return errorResult(e);
    }
  }
  return {
    server,
    async settled() {
      // a tick first: a request read just before the input ended is still being dispatched
      await new Promise((r) => setImmediate(r));
      while (pending.size) await Promise.allSettled([...pending]);
      // and one more: the last answer is sent after its handler settles
      await new Promise((r) => setImmediate(r));
    },
  };
}

/**
 * Serve a host's tools on one MCP transport; resolves when the transport closes. When
 * `inputEnded` resolves (the client will send nothing more), the calls already received are
 * answered and then the transport is closed.
 */
export async function serveMcp(
  host: ToolHost,
  transport: Transport,
  opts: McpOptions & { inputEnded?: Promise<unknown> } = {},
): Promise<void> {
  const { server, settled } = mcpServer(host, opts);
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(transport);
  void opts.inputEnded?.then(async () => {
    await settled();
    await transport.close();
  });
  await closed;
}
