/**
 * The broker daemon: a ToolHost served over HTTP/1.1 on a unix socket, so the operator's
 * configuration and secrets stay with the daemon's user while an agent, through
 * `clibroker run`, passes only a tool, its arguments and its stdin. The tier and the
 * context of every call are the listener's (from the operator's configuration), never the
 * caller's. docs/daemon.md describes the protocol.
 *
 * Routes (every answer is `{ok:true,result}` or `{ok:false,error:{code,message,details?,retry}}`):
 *   GET  /healthz                       → {status:'ok'}          (no token needed; the store's code
 *                                        while its audit writes fail)
 *   GET  /v1/tools                      → {tools}
 *   POST /v1/tools/execute {toolId, input} → host.runTool(toolId, input, listener's {cliTier, context})
 *   POST /v1/approvals/{id}/resume      → host.resume(id), only on a listener at tier write
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { redactLogText } from '../audit/logger.js';
import { BrokerError, brokerError, type ErrorCode } from '../errors.js';
import type { CallOptions, ToolHost } from '../host/types.js';
import type { ApprovalContext, Tier } from '../policy/index.js';
import { drain, executeBody, isObject, readJson, Refusal } from './body.js';
import {
  statusFor as frontStatus,
  wireError as frontWire,
  logRefused,
  readSecretOrRefuse,
  type WireError,
} from '../front/wire.js';
import { ROUTES } from './protocol.js';
import { bindSocket } from './socket.js';

/** An approval id as the store writes it (a UUID); anything else is refused before the host sees it. */
const APPROVAL_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
const RESUME_RE = /^\/v1\/approvals\/([^/]+)\/resume$/;

export interface DaemonOptions {
  /** absolute path of the unix socket */
  socket: string;
  /** the socket file's mode, default 0o660: its owner and group may connect, nobody else */
  socketMode?: number;
  /** the tier every call through this listener requests (the host's default, read, when absent); resumes are served only at write */
  cliTier?: Tier;
  /** where the calls run (the host's default, agent-step, when absent) */
  context?: ApprovalContext;
  /** when it yields a token, every route but /healthz needs `Authorization: Bearer <token>`; read per request */
  executorToken?: () => Promise<string | undefined>;
  /** one line per request: route, tool, runId, code, status, duration; never arguments, stdin or tokens */
  logger?: Logger;
  /** a client must send its request head within this (default 10 s) */
  headersTimeoutMs?: number;
  /** … and its whole request within this (default 120 s); a run's own duration is not counted */
  requestTimeoutMs?: number;
  /** on close, calls still running after this are cut (default 30 s) */
  closeGraceMs?: number;
}

export interface Daemon {
  socket: string;
  /** Stop accepting, remove the socket, let running calls finish (up to the grace), then return. */
  close(): Promise<void>;
}

/** The statuses of the daemon's own codes (the rest: src/front/wire.ts). */
const OWN_STATUS: Partial<Record<ErrorCode, number>> = {
  DAEMON_PROTOCOL_ERROR: 400,
  DAEMON_UNAUTHORIZED: 401,
};

/** The HTTP status of a failure the daemon answers (docs/daemon.md). */
export function statusFor(code: ErrorCode): number {
  return frontStatus(code, OWN_STATUS);
}

/** The wire form of a failure: a refusal of the request at its own status, a coded one by its code. */
export function wireError(e: unknown): { status: number; error: WireError } {
  return frontWire(e, (b) => (b instanceof Refusal ? b.httpStatus : statusFor(b.code)));
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** A resume through a listener below tier write: refused before the host sees it. */
function resumeAboveTier(approvalId: string, tier: Tier): BrokerError {
  return new BrokerError('POLICY_BLOCKED', {
    policyCode: 'CLI_REQUEST_TIER_DENIED',
    message: `a resumed call runs at tier write, and this listener grants tier ${tier}; approval ${approvalId} was not resumed. Resume it through a listener at tier write (daemon.cliTier).`,
    details: { approvalId, listenerTier: tier },
  });
}

/**
 * Serve `host` on a unix socket until `close()`.
 * @throws BrokerError DAEMON_SOCKET_DIR_UNSAFE (a user other than this one and root could replace
 *   the socket: nothing is created), DAEMON_SOCKET_IN_USE (a live socket, another user's socket,
 *   or a file that is not a socket, at the path), CONFIG_INVALID (the path cannot be used)
 */
export async function startDaemon(host: ToolHost, opts: DaemonOptions): Promise<Daemon> {
  const headersTimeout = opts.headersTimeoutMs ?? 10_000;
  const requestTimeout = Math.max(opts.requestTimeoutMs ?? 120_000, headersTimeout);
  const callOpts: CallOptions = {
    ...(opts.cliTier ? { cliTier: opts.cliTier } : {}),
    ...(opts.context ? { context: opts.context } : {}),
    // the listener's tier is the operator's (daemon.cliTier): a tier denial says so
    tierSource: 'daemon.cliTier',
  };
  const log = opts.logger;

  async function authorize(req: IncomingMessage): Promise<void> {
    if (!opts.executorToken) return;
    const expected = await readSecretOrRefuse(
      () => opts.executorToken!(),
      log,
      'daemon.token_unavailable',
      'the executor token cannot be read',
    );
    if (expected === undefined) return;
    if (expected === '') throw new BrokerError('CONFIG_SECRET_UNAVAILABLE');
    const m = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
    // digests first: timingSafeEqual needs equal lengths, and a length must not leak either
    if (!m || !timingSafeEqual(digest(m[1]!), digest(expected))) {
      throw brokerError('DAEMON_UNAUTHORIZED', { token: m ? 'mismatch' : 'missing' });
    }
  }

  async function route(req: IncomingMessage, line: Record<string, unknown>): Promise<unknown> {
    const path = (req.url ?? '').split('?')[0]!;
    if (!path.startsWith('/')) throw new Refusal(400, 'the request target must be a path');
    const method = req.method ?? '';
    const hasBody = req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0';
    if (path === ROUTES.health && method === 'GET') {
      // a store that refuses audit writes starts no call: the health check says so (5xx)
      await host.checkStore?.();
      return { status: 'ok' };
    }
    await authorize(req);
    const only = (want: string) => {
      if (method !== want) throw new Refusal(405, `${path} takes ${want}`);
    };
    if (path === ROUTES.tools) {
      only('GET');
      if (hasBody || req.headers['transfer-encoding']) throw new Refusal(400, 'GET takes no body');
      return { tools: host.tools() };
    }
    if (path === ROUTES.execute) {
      only('POST');
      const { toolId, input } = executeBody(await readJson(req));
      line['tool'] = redactLogText(toolId).slice(0, 128);
      const out = await host.runTool(toolId, input, callOpts);
      line['runId'] = out.runId;
      return out;
    }
    const m = RESUME_RE.exec(path);
    if (m) {
      only('POST');
      let id: string;
      try {
        id = decodeURIComponent(m[1]!);
      } catch {
        throw new Refusal(400, 'the approval id is not percent-encoded properly');
      }
      if (!APPROVAL_ID_RE.test(id))
        throw new Refusal(400, 'the approval id is malformed (letters, digits, . _ : -, at most 128)');
      line['approvalId'] = id;
      const body = await readJson(req);
      if (body !== undefined && !(isObject(body) && Object.keys(body).length === 0))
        throw new Refusal(400, 'resume takes no body (or {})');
      // a resumed call runs at tier write, whatever listener it comes through: a listener that
      // grants less (one that could never have paused it, or one lowered since) does not resume
      if (opts.cliTier !== 'write') throw resumeAboveTier(id, opts.cliTier ?? 'read');
      const out = await host.resume(id);
      line['runId'] = out.runId;
      return out;
    }
    throw new Refusal(404, `no route ${method} ${redactLogText(path).slice(0, 100)}`);
  }

  function send(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    payload: unknown,
    close: boolean,
  ): void {
    if (res.headersSent || res.destroyed) return;
    const body = JSON.stringify(payload);
    // a client that stops reading cannot hold the connection forever
    res.setTimeout(30_000, () => res.destroy());
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      ...(close ? { connection: 'close' } : {}),
    });
    res.end(body);
    // a refused body is not read to its end: the connection goes once the answer is out
    if (close) res.once('finish', () => req.socket.destroy());
  }

  const server = createServer(
    {
      headersTimeout,
      requestTimeout,
      keepAliveTimeout: 5_000,
      connectionsCheckingInterval: Math.min(1_000, headersTimeout),
      maxHeaderSize: 16 * 1024,
    },
    (req, res) => {
      const started = performance.now();
      const line: Record<string, unknown> = {
        event: 'daemon.request',
        method: req.method,
        path: redactLogText((req.url ?? '').split('?')[0]!).slice(0, 128),
      };
      route(req, line).then(
        (result) => {
          send(req, res, 200, { ok: true, result }, false);
          log?.info(
            { ...line, status: 200, durationMs: Math.round(performance.now() - started) },
            'daemon request',
          );
        },
        (e: unknown) => {
          const { status, error } = wireError(e);
          // a refusal before the body was read: drop the rest so the client gets the answer
          const settle = status === 413 ? Promise.resolve(false) : drain(req);
          void settle.then((drained) => send(req, res, status, { ok: false, error }, !drained));
          logRefused(log, 'daemon', { ...line, status, code: error.code }, started, e);
        },
      );
    },
  );
  const bound = await bindSocket(server, opts.socket, opts.socketMode ?? 0o660);
  log?.info({ event: 'daemon.listening', socket: bound.path }, 'daemon listening');
  let closing: Promise<void> | undefined;
  return {
    socket: bound.path,
    close() {
      closing ??= (async () => {
        const cut = setTimeout(() => server.closeAllConnections(), opts.closeGraceMs ?? 30_000);
        cut.unref();
        await bound.close();
        clearTimeout(cut);
      })();
      return closing;
    },
  };
}
