/**
 * The HTTP server's answers: the front doors' envelope (`{ok:true,result}` or
 * `{ok:false,error:{code,message,details?,retry}}`, src/front/wire.ts), the status a code is
 * answered with, and the server's own refusal of a request (SERVE_PROTOCOL_ERROR).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BrokerError, type ErrorCode, errorMessage } from '../errors.js';
import { readJson as readBody } from '../front/body.js';
import { statusFor as frontStatus, wireError as frontWire, type WireError } from '../front/wire.js';

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

/** The statuses of the server's own codes (the rest: src/front/wire.ts). */
const STATUS: Partial<Record<ErrorCode, number>> = {
  SERVE_PROTOCOL_ERROR: 400,
  SERVE_UNAUTHORIZED: 401,
  SERVE_FORBIDDEN: 403,
  SERVE_STOPPED: 503,
  SERVE_CALL_CANCELLED: 409,
  SERVE_APPROVAL_HELD: 409,
  SERVE_RATE_LIMITED: 429,
  CONFIG_SECRET_UNAVAILABLE: 503,
};

export function statusFor(code: ErrorCode): number {
  return frontStatus(code, STATUS);
}

/** The body as JSON, bounded by the front doors' reader; refused as the server's own. */
export function readJson(req: IncomingMessage): Promise<unknown> {
  return readBody(req, (status, reason, details) => new ServeRefusal(status, reason, details));
}

/** The wire form of a failure: a refusal of the request at its own status, a coded one by its code. */
export function wireError(e: unknown): { status: number; error: WireError } {
  return frontWire(e, (b) => (b instanceof ServeRefusal ? b.httpStatus : statusFor(b.code)));
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
