/**
 * The HTTP server's answers: the daemon's envelope (`{ok:true,result}` or
 * `{ok:false,error:{code,message,details?,retry}}`), the status a code is answered with, and
 * the server's own refusal of a request (SERVE_PROTOCOL_ERROR).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Refusal as DaemonRefusal, readJson as readDaemonJson } from '../daemon/body.js';
import { statusFor as daemonStatus, wireError as daemonWire } from '../daemon/server.js';
import { BrokerError, type ErrorCode, errorMessage } from '../errors.js';

/** A refusal of the request itself, with the HTTP status it is answered with. */
export class ServeRefusal extends BrokerError {
  constructor(
    readonly httpStatus: number,
    message: string,
    details?: Record<string, unknown>,
  ) {
    super('SERVE_PROTOCOL_ERROR', {
      message: errorMessage('SERVE_PROTOCOL_ERROR', { reason: message }),
      ...(details ? { details } : {}),
    });
  }
}

const STATUS: Partial<Record<ErrorCode, number>> = {
  SERVE_UNAUTHORIZED: 401,
  SERVE_FORBIDDEN: 403,
  SERVE_STOPPED: 503,
  SERVE_CALL_CANCELLED: 409,
  SERVE_APPROVAL_HELD: 409,
  SERVE_RATE_LIMITED: 429,
  CONFIG_SECRET_UNAVAILABLE: 503,
};

export function statusFor(code: ErrorCode): number {
  return STATUS[code] ?? daemonStatus(code);
}

/** The body as JSON (bounded as the daemon's); its refusals re-coded as the server's. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  try {
    return await readDaemonJson(req);
  } catch (e) {
    if (e instanceof DaemonRefusal)
      throw new ServeRefusal(e.httpStatus, e.message.replace(/^DAEMON_PROTOCOL_ERROR: /, ''));
    throw e;
  }
}

export function wireError(e: unknown): { status: number; error: ReturnType<typeof daemonWire>['error'] } {
  const w = daemonWire(e);
  if (e instanceof ServeRefusal) return { status: e.httpStatus, error: w.error };
  if (e instanceof BrokerError) return { status: statusFor(e.code), error: w.error };
  return w;
}

/** The headers a failure's answer carries besides its body: Retry-After for a rate limit. */
export function errorHeaders(error: {
  code: string;
  details?: Record<string, unknown>;
}): Record<string, string> {
  const after = error.details?.['retryAfterSeconds'];
  return error.code === 'SERVE_RATE_LIMITED' && typeof after === 'number'
    ? { 'retry-after': String(after) }
    : {};
}

/** Write one answer; a client that stops reading cannot hold the connection forever. */
export function send(
  res: ServerResponse,
  status: number,
  body: string,
  type: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  res.setTimeout(30_000, () => res.destroy());
  res.writeHead(status, {
    'content-type': type,
    'content-length': String(Buffer.byteLength(body)),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...headers,
  });
  res.end(body);
}

export const sendJson = (
  res: ServerResponse,
  status: number,
  payload: unknown,
  headers: Record<string, string> = {},
): void => send(res, status, JSON.stringify(payload), 'application/json; charset=utf-8', headers);
