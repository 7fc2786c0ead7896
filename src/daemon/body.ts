/**
 * Request bodies of the daemon: read by the front doors' bounded reader (src/front/body.ts),
 * refused as DAEMON_PROTOCOL_ERROR, and the execute body's shape, `{toolId, input}` and
 * nothing else.
 */
import type { IncomingMessage } from 'node:http';
import { redactLogText } from '../audit/logger.js';
import { BrokerError, errorMessage } from '../errors.js';
import { isObject, readJson as readBody } from '../front/body.js';

export { drain, isObject, MAX_BODY_BYTES } from '../front/body.js';

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

/** Read the body as JSON; `undefined` for an empty one. @throws Refusal 413 over the cap, 400 not UTF-8 or not JSON */
export function readJson(req: IncomingMessage): Promise<unknown> {
  return readBody(req, (status, reason, details) => new Refusal(status, reason, details));
}

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
