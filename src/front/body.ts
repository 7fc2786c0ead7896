/**
 * Request bodies of a front door (the daemon, `clibroker serve`): read up to a cap and refused
 * the moment they pass it (nothing past the cap is kept). Each door refuses in its own words:
 * it passes the error a refusal becomes (DAEMON_PROTOCOL_ERROR, SERVE_PROTOCOL_ERROR).
 *
 * The body is read with `data` events, not `for await`: leaving an async iterator early
 * destroys the request, and with it the socket the refusal has to go out on.
 */
import type { IncomingMessage } from 'node:http';
import { SANDBOX_LIMITS } from '../sandbox/types.js';

/** How a front door refuses a request itself: the HTTP status, the reason, and details. */
export type Refuse = (httpStatus: number, reason: string, details?: Record<string, unknown>) => Error;

/**
 * The largest request body read: every argument and the stdin at their limits, with every
 * byte JSON-escaped at its widest (`\u0001` is six characters for one byte), plus room for
 * the keys and quotes. Anything a host would accept fits; nothing past it is buffered.
 */
export const MAX_BODY_BYTES =
  (SANDBOX_LIMITS.maxArgs * SANDBOX_LIMITS.maxArgBytes + SANDBOX_LIMITS.maxStdinBytes) * 6 + 64 * 1024;

const tooLarge = (refuse: Refuse): Error => refuse(413, `the body is larger than ${MAX_BODY_BYTES} bytes`);

/**
 * Consume the body: `keep` → its bytes, else discarded. Rejects with 413 as soon as the
 * count passes the cap, leaving the request paused (its connection is closed after the answer).
 */
function consume(req: IncomingMessage, keep: boolean, refuse: Refuse): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) return Promise.reject(tooLarge(refuse));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (): void => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        done();
        req.pause();
        reject(tooLarge(refuse));
      } else if (keep) chunks.push(chunk);
    };
    const onEnd = (): void => {
      done();
      resolve(Buffer.concat(chunks, keep ? size : 0));
    };
    const onError = (e: Error): void => {
      done();
      reject(e);
    };
    const onClose = (): void => {
      done();
      if (!req.complete) reject(refuse(400, 'the client closed the connection before its body ended'));
    };
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/** Read the body as JSON; `undefined` for an empty one. Refused: 413 over the cap, 400 not UTF-8 or not JSON. */
export async function readJson(req: IncomingMessage, refuse: Refuse): Promise<unknown> {
  const raw = await consume(req, true, refuse);
  if (raw.length === 0) return undefined;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw refuse(400, 'the body is not UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the input, which may hold anything: never repeated
    throw refuse(400, 'the body is not valid JSON');
  }
}

/**
 * Read and drop the rest of a body a front door refused before reading it, so a client that is
 * still writing gets the answer rather than a broken pipe. False when it is over the cap.
 */
export async function drain(req: IncomingMessage): Promise<boolean> {
  if (req.complete) return true;
  try {
    await consume(req, false, (status, reason) => new Error(`${status} ${reason}`));
    return true;
  } catch {
    return false;
  }
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
