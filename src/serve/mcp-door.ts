/**
 * The /mcp door of the HTTP server: MCP Streamable HTTP through the SDK's transport, one
 * transport per MCP session.
 *
 *   the MCP token ─▶ the body (POST: JSON-RPC 2.0 messages; GET and DELETE: none)
 *   ─▶ the session it names, or a new one for an initialize (at most `max` at once)
 *   ─▶ the transport answers
 *
 * Each refusal is a JSON-RPC error with the catalogue's code in `data`. A session quiet for
 * longer than any call can last is ended by a sweep; a long call sends progress meanwhile.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { showInvisible } from '../audit/visible.js';
import type { ServeTokens } from '../config/types.js';
import { drain } from '../front/body.js';
import type { CallOptions, ToolHost, ToolOutput } from '../host/types.js';
import { authorize } from './auth.js';
import type { Holder } from './hold.js';
import { type McpCallContext, mcpServer } from './mcp.js';
import type { Throttle } from './throttle.js';
import { errorHeaders, ServeRefusal, readJson, sendJson, wireError } from './wire.js';

/** The SDK's parts the door uses, imported when the server starts. */
export interface McpSdk {
  StreamableHTTPServerTransport: typeof StreamableHTTPServerTransport;
  isInitializeRequest(message: unknown): boolean;
  isMessage(message: unknown): boolean;
}

/** Imports the SDK's transport and message schemas. */
export async function mcpSdk(): Promise<McpSdk> {
  const [{ StreamableHTTPServerTransport }, { isInitializeRequest, JSONRPCMessageSchema }] =
    await Promise.all([
      import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ]);
  return {
    StreamableHTTPServerTransport,
    isInitializeRequest,
    isMessage: (m) => JSONRPCMessageSchema.safeParse(m).success,
  };
}

/** A refusal at the door: its status, its JSON-RPC code, the error, and the code for the request's log line. */
export class RpcRefusal {
  constructor(
    readonly status: number,
    readonly rpcCode: number,
    readonly error: unknown,
    readonly lineCode?: string,
  ) {}
}

/** A JSON-RPC error for /mcp, with the catalogue's code in `data`. */
export function rpcError(res: ServerResponse, status: number, rpcCode: number, e: unknown): void {
  const { error } = wireError(e);
  sendJson(
    res,
    status,
    {
      jsonrpc: '2.0',
      id: null,
      error: { code: rpcCode, message: error.message, data: { code: error.code } },
    },
    errorHeaders(error),
  );
}

/** What the door's sessions are made with. */
export interface McpSessionOptions {
  host: ToolHost;
  /** the tier, context and tier source of every MCP call */
  call: Required<CallOptions>;
  version?: string;
  /** at most this many sessions at once */
  max: number;
  /** a session quiet for this long is ended */
  idleMs: number;
  /** a long call sends a progress notification this often */
  progressEvery: number;
  /** the holder calls run through (set once the server listens) */
  holder: () => Holder;
}

/** The MCP sessions of one server: their transports, when each last spoke, and their calls in flight. */
export class McpSessions {
  readonly #sdk: McpSdk;
  readonly #opts: McpSessionOptions;
  readonly #transports = new Map<string, StreamableHTTPServerTransport>();
  /** when each session last sent a request */
  readonly #lastSeen = new Map<string, number>();
  /** per session: resolves once every call it received is answered */
  readonly #answered = new Set<() => Promise<void>>();
  readonly #sweep: NodeJS.Timeout;

  constructor(sdk: McpSdk, opts: McpSessionOptions) {
    this.#sdk = sdk;
    this.#opts = opts;
    this.#sweep = setInterval(() => this.#endIdle(), Math.min(60_000, opts.idleMs));
    this.#sweep.unref();
  }

  get size(): number {
    return this.#transports.size;
  }

  /**
   * The transport a request goes to: the session it names, or a new one for an initialize.
   * @throws RpcRefusal for a session no longer held, a first request that is no initialize,
   *   or a new session past the bound
   */
  async for(req: IncomingMessage, body: unknown): Promise<StreamableHTTPServerTransport> {
    const sid = req.headers['mcp-session-id'];
    const known = typeof sid === 'string' ? this.#transports.get(sid) : undefined;
    if (known && typeof sid === 'string') {
      this.#lastSeen.set(sid, Date.now());
      return known;
    }
    if (
      sid !== undefined ||
      req.method !== 'POST' ||
      !this.#sdk.isInitializeRequest(Array.isArray(body) ? body[0] : body)
    )
      throw new RpcRefusal(
        sid !== undefined ? 404 : 400,
        -32000,
        new ServeRefusal(
          sid !== undefined ? 404 : 400,
          sid !== undefined
            ? 'no MCP session has this id (it ended, or the server restarted): initialize again'
            : 'a request without Mcp-Session-Id must be initialize',
        ),
      );
    if (this.#transports.size >= this.#opts.max)
      throw new RpcRefusal(
        503,
        -32000,
        new ServeRefusal(
          503,
          `the server holds ${this.#opts.max} MCP sessions already; end one (DELETE /mcp)`,
        ),
      );
    return this.#open();
  }

  /** A new session: its transport, its MCP server (calls through the holder), connected. */
  async #open(): Promise<StreamableHTTPServerTransport> {
    const { host, call, version, progressEvery, holder } = this.#opts;
    const t: StreamableHTTPServerTransport = new this.#sdk.StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.#transports.set(id, t);
        this.#lastSeen.set(id, Date.now());
      },
    });
    const { server, settled } = mcpServer(host, {
      ...call,
      ...(version ? { version } : {}),
      call: (tool, args, ctx) => heldCall(holder(), call, progressEvery, tool, args, ctx),
    });
    this.#answered.add(settled);
    t.onclose = () => {
      this.#answered.delete(settled);
      if (t.sessionId) {
        this.#transports.delete(t.sessionId);
        this.#lastSeen.delete(t.sessionId);
      }
    };
    await server.connect(t);
    return t;
  }

  #endIdle(): void {
    const now = Date.now();
    for (const [id, at] of this.#lastSeen)
      if (now - at > this.#opts.idleMs)
        void this.#transports
          .get(id)
          ?.close()
          .catch(() => {});
  }

  /** Resolves once every call of every session is answered. */
  async settled(): Promise<void> {
    await Promise.all([...this.#answered].map((s) => s()));
  }

  /** Stops the sweep and ends every session. */
  async close(): Promise<void> {
    clearInterval(this.#sweep);
    for (const t of [...this.#transports.values()]) await t.close().catch(() => {});
  }

  /** Stops the sweep only (the server is closing; the sessions end after their calls). */
  stopSweep(): void {
    clearInterval(this.#sweep);
  }
}

/**
 * One MCP tool call through the holder. A long call says what it is doing every
 * `progressEvery`: running, or waiting for a person.
 */
export async function heldCall(
  holder: Holder,
  call: Required<CallOptions>,
  progressEvery: number,
  tool: string,
  args: unknown,
  ctx: McpCallContext,
): Promise<ToolOutput> {
  const started = Date.now();
  let state = `running ${tool}`;
  const beat = setInterval(
    () => ctx.progress(`${state} (${Math.round((Date.now() - started) / 1000)} s)`),
    progressEvery,
  );
  try {
    return await holder.run(tool, args, call, {
      signal: ctx.signal,
      onWait: (n) => {
        state = `waiting for a person to approve ${showInvisible(`${n.request.method} ${n.request.host}${n.request.path}`)}: approval ${n.approvalId}, review at ${n.reviewUrl}`;
        ctx.progress(state);
      },
    });
  } finally {
    clearInterval(beat);
  }
}

/** The MCP token, checked; a refused one's body is drained first. */
async function admit(
  req: IncomingMessage,
  tokens: ServeTokens,
  throttle: Throttle,
  line: Record<string, unknown>,
): Promise<void> {
  try {
    await authorize(req, tokens, ['mcp'], throttle, line);
  } catch (e) {
    await drain(req);
    throw new RpcRefusal(wireError(e).status, -32001, e, wireError(e).error.code);
  }
}

/** The request's body: JSON-RPC 2.0 messages for a POST, none for GET and DELETE; any other method is refused. */
async function mcpBody(req: IncomingMessage, sdk: Pick<McpSdk, 'isMessage'>): Promise<unknown> {
  if (req.method === 'POST') {
    let body: unknown;
    try {
      body = await readJson(req);
    } catch (e) {
      throw new RpcRefusal(wireError(e).status, -32700, e, 'SERVE_PROTOCOL_ERROR');
    }
    const msgs = Array.isArray(body) ? body : [body];
    if (msgs.length === 0 || !msgs.every((m) => sdk.isMessage(m)))
      throw new RpcRefusal(
        400,
        -32600,
        new ServeRefusal(400, 'the body is not a JSON-RPC 2.0 message'),
        'SERVE_PROTOCOL_ERROR',
      );
    return body;
  }
  if (req.method !== 'GET' && req.method !== 'DELETE')
    throw new RpcRefusal(405, -32600, new ServeRefusal(405, '/mcp takes POST, GET or DELETE'));
  return undefined;
}

/** The /mcp door: token, body, session, transport; a refusal is answered as JSON-RPC. */
export async function mcpDoor(
  door: { sdk: McpSdk; sessions: McpSessions; throttle: Throttle },
  req: IncomingMessage,
  res: ServerResponse,
  tokens: ServeTokens,
  line: Record<string, unknown>,
): Promise<void> {
  try {
    await admit(req, tokens, door.throttle, line);
    const body = await mcpBody(req, door.sdk);
    const transport = await door.sessions.for(req, body);
    await transport.handleRequest(req, res, body);
  } catch (e) {
    if (!(e instanceof RpcRefusal)) throw e;
    if (e.lineCode !== undefined) line['code'] = e.lineCode;
    rpcError(res, e.status, e.rpcCode, e.error);
  }
}
