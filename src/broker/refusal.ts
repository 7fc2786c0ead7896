/**
 * Refusals as the child sees them: always an HTTP response with the catalogue's
 * status, the standard reason phrase (az prints it verbatim), `content-type:
 * application/json`, a top-level `message` (gh prints it) and `error: {code, message,
 * policyCode}` (az prints ARM-style error.code / error.message). At an OAuth token endpoint
 * the body is OAuth JSON `{error, error_description}` instead: MSAL crashes on anything else.
 * Which requests those are, only the credentials know (`CredentialStamper.refusalShape`).
 */
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { type BrokerError, REASON_PHRASES } from '../errors.js';
import type { RefusalShape } from './types.js';

/** The body of a refusal, in the shape the request's reader expects (the credentials say which). */
export function refusalBody(err: BrokerError, shape: RefusalShape = 'broker'): string {
  if (shape === 'oauth') {
    return JSON.stringify({
      error: err.status === 401 ? 'invalid_client' : 'access_denied',
      error_description: err.message,
      error_codes: [err.policyCode ?? err.code],
    });
  }
  const error: Record<string, unknown> = { code: err.code, message: err.message };
  if (err.policyCode) error.policyCode = err.policyCode;
  if (err.details) error.details = err.details;
  return JSON.stringify({ message: err.message, error });
}

/** What sendRefusal writes to: node's response (plain HTTP outside a tunnel) or the tunnel's own (inner.ts). */
export type RefusalTarget = Pick<ServerResponse, 'headersSent' | 'statusCode' | 'statusMessage'> & {
  setHeader(name: string, value: string | number): unknown;
  end(body: string): unknown;
  destroy(err?: Error): unknown;
};

/** Answers a request inside the tunnel with a refusal; `closeConnection` ends the connection after it. */
export function sendRefusal(
  res: RefusalTarget,
  err: BrokerError,
  shape: RefusalShape = 'broker',
  closeConnection = false,
): number {
  const body = refusalBody(err, shape);
  const status = err.status;
  if (res.headersSent) {
    // Too late for a clean answer: cut the response so the child sees an error, not a truncated success.
    res.destroy(err);
    return status;
  }
  res.statusCode = status;
  res.statusMessage = REASON_PHRASES[status] ?? 'Refused';
  res.setHeader('content-type', 'application/json');
  res.setHeader('content-length', Buffer.byteLength(body));
  res.setHeader('cache-control', 'no-store');
  if (closeConnection) res.setHeader('connection', 'close');
  res.end(body);
  return status;
}

/** How long a socket we ended waits for the child to close its side, unless the caller says. */
export const LINGER_MS = 10_000;

/**
 * Ends a socket after what was written, and destroys it if the child has not closed its side
 * within `ms`: a half-open socket the child never closes would otherwise stay (and keep its
 * tunnel slot) for as long as the child likes.
 */
export function endWithin(socket: Duplex, ms: number, data?: string): void {
  if (data === undefined) socket.end();
  else socket.end(data);
  if (socket.destroyed) return;
  const timer = setTimeout(() => socket.destroy(), ms);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/**
 * Writes a refusal straight onto a raw socket (CONNECT answers, upgrades, parse errors) and
 * ends it; a child that keeps its side open has `lingerMs` before the socket is destroyed.
 * Returns the status written, or undefined when the socket could no longer take it.
 */
export function writeRawRefusal(
  socket: Duplex,
  err: BrokerError,
  extraHeaders: Readonly<Record<string, string>> = {},
  lingerMs = LINGER_MS,
): number | undefined {
  const body = refusalBody(err);
  const status = err.status;
  if (socket.writable) {
    let head = `HTTP/1.1 ${status} ${REASON_PHRASES[status] ?? 'Refused'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n`;
    for (const [k, v] of Object.entries(extraHeaders)) head += `${k}: ${v}\r\n`;
    endWithin(socket, lingerMs, `${head}\r\n${body}`);
    return status;
  }
  socket.destroy();
  return undefined;
}
