/**
 * Request bodies of the daemon: read up to a cap and refused the moment they pass it
 * (nothing past the cap is kept), and the execute body's shape, `{toolId, input}` and
 * nothing else.
 *
 * The body is read with `data` events, not `for await`: leaving an async iterator early
 * destroys the request, and with it the socket the refusal has to go out on.
 */
import type { IncomingMessage } from 'node:http';
import { redactLogText } from '../audit/logger.js';
import { BrokerError, errorMessage } from '../errors.js';
import { SANDBOX_LIMITS } from '../sandbox/types.js';

/**
 * The largest request body read: every argument and the stdin at their limits, with every
 * byte JSON-escaped at its widest (`\u0001` is six characters for one byte), plus room for
 * the keys and quotes. Anything a host would accept fits; nothing past it is buffered.
 */
export const MAX_BODY_BYTES =
  (SANDBOX_LIMITS.maxArgs * SANDBOX_LIMITS.maxArgBytes + SANDBOX_LIMITS.maxStdinBytes) * 6 + 64 * 1024;

/** A refusal of the request itself (DAEMON_PROTOCOL_ERROR), with the HTTP status it is answered with. */
export class Refusal extends BrokerError {
  constructor(
    readonly httpStatus: number,
    message: string,
    details?: Record<string, unknown>,
  ) {
    super('DAEMON_PROTOCOL_ERROR', {
      message: errorMessage('DAEMON_PROTOCOL_ERROR', { reason: message }),
      ...(details ? { details } : {}),
    });
  }
}

const tooLarge = (): Refusal => new Refusal(413, `the body is larger than ${MAX_BODY_BYTES} bytes`);

/**
 * Consume the body: `keep` → its bytes, else discarded. Rejects with 413 as soon as the
 * count passes the cap, leaving the request paused (its connection is closed after the answer).
 */
function consume(req: IncomingMessage, keep: boolean): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) return Promise.reject(tooLarge());
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
        reject(tooLarge());
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
      if (!req.complete) reject(new Refusal(400, 'the client closed the connection before its body ended'));
    };
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/** Read the body as JSON; `undefined` for an empty one. @throws Refusal 413 over the cap, 400 not UTF-8 or not JSON */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const raw = await consume(req, true);
  if (raw.length === 0) return undefined;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw new Refusal(400, 'the body is not UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the input, which may hold anything: never repeated
    throw new Refusal(400, 'the body is not valid JSON');
  }
}

/**
 * Read and drop the rest of a body the daemon refused before reading it, so a client that is
 * still writing gets the answer rather than a broken pipe. False when it is over the cap.
 */
export async function drain(req: IncomingMessage): Promise<boolean> {
  if (req.complete) return true;
  try {
    await consume(req, false);
    return true;
  } catch {
    return false;
  }
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `{toolId, input}` and nothing else: the tier and the context are the listener's, so a
 * body that names them is refused rather than ignored (a caller who sends them expects them
 * to count). The input itself goes to the host as is; the host validates it.
 * @throws Refusal 400
 */
export function executeBody(body: unknown): { toolId: string; input: unknown } {
  if (!isObject(body)) throw new Refusal(400, 'the body must be a JSON object {"toolId", "input"}');
  const extra = Object.keys(body).filter((k) => k !== 'toolId' && k !== 'input');
  if (extra.length) {
    const named = extra.slice(0, 8).map((k) => redactLogText(k).slice(0, 64));
    const ours = extra.some((k) => ['cliTier', 'tier', 'context'].includes(k));
    throw new Refusal(
      400,
      `the body holds only toolId and input, not ${named.join(', ')}${ours ? "; the tier and the context are set by the daemon's configuration, never by the caller" : ''}`,
      { fields: named },
    );
  }
  const { toolId } = body;
  if (typeof toolId !== 'string' || toolId === '' || toolId.length > 256) {
    throw new Refusal(400, 'toolId must be a tool name or id (a non-empty string of at most 256 characters)');
  }
  if (!('input' in body)) throw new Refusal(400, 'input is missing: {"args": [...], "stdin"?: "..."}');
  return { toolId, input: body.input };
}
