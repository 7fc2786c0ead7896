/**
 * What both front doors (the daemon, `clibroker serve`) answer a failure with: its wire form
 * (`{code, message, details?, retry}`, never a stack), the status by the code's side, the
 * details a caller may see, one log line per refused request, and the read of a token secret
 * that fails closed. Each door adds the statuses of its own codes.
 */
import type { Logger } from 'pino';
import { redactLogFields } from '../audit/logger.js';
import { BrokerError, CATALOGUE, type ErrorCode, isBrokerError } from '../errors.js';

/** What a front door answers when a call failed: a catalogue code, never a stack. */
export interface WireError {
  code: string;
  message: string;
  details?: Record<string, unknown>;
  /** whether the same call can succeed if simply retried */
  retry: boolean;
}

/** The statuses both doors give codes of the host and the store. */
const STATUS_BY_CODE: Partial<Record<ErrorCode, number>> = {
  INVALID_TOOL_INPUT: 400,
  TOOL_VENDOR_CLI_NOT_OFFERED: 404,
  APPROVAL_NOT_FOUND: 404,
  APPROVAL_NOT_PENDING: 409,
};

/**
 * The HTTP status of a failure: the code decides the class (400 the caller's input, 401 the
 * token, 404 nothing by that name, 409 an approval in the wrong state, 422 policy refused,
 * 500 everything on the server's side). `own` holds a door's statuses for its own codes.
 * Clients read the code, not the status.
 */
export function statusFor(code: ErrorCode, own: Partial<Record<ErrorCode, number>> = {}): number {
  const s = own[code] ?? STATUS_BY_CODE[code];
  if (s !== undefined) return s;
  const side = CATALOGUE[code].side;
  return side === 'policy' ? 422 : side === 'caller' ? 400 : 500;
}

/**
 * A failure's details as a front door answers them: without `store` and `storeError`, where the
 * operator's database is and the driver's words that name its address (they stay in the
 * operator's logs and commands; a caller, and so an agent, never learns them).
 */
export function frontDetails(
  details: Readonly<Record<string, unknown>> | undefined,
): Record<string, unknown> | undefined {
  if (!details || !('store' in details || 'storeError' in details))
    return details as Record<string, unknown> | undefined;
  const { store: _where, storeError: _said, ...rest } = details;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

/**
 * The wire form of a failure, with the status `status` gives a coded one; an uncoded error is
 * INTERNAL_ERROR (500) with nothing of its own.
 */
export function wireError(
  e: unknown,
  status: (e: BrokerError) => number,
): { status: number; error: WireError } {
  if (!isBrokerError(e))
    return {
      status: 500,
      error: { code: 'INTERNAL_ERROR', message: new BrokerError('INTERNAL_ERROR').message, retry: false },
    };
  const details = frontDetails(e.policyCode ? { ...e.details, policyCode: e.policyCode } : e.details);
  return {
    status: status(e),
    error: { code: e.code, message: e.message, ...(details ? { details } : {}), retry: e.retry },
  };
}

/**
 * Reads a front door's token secret for one request. A secret that cannot be read is logged
 * (redacted) and refused as CONFIG_SECRET_UNAVAILABLE: fail closed, and without the secret's
 * location in an answer to a caller not yet known.
 * @throws BrokerError CONFIG_SECRET_UNAVAILABLE
 */
export async function readSecretOrRefuse<T>(
  read: () => Promise<T>,
  log: Logger | undefined,
  event: string,
  message: string,
): Promise<T> {
  try {
    return await read();
  } catch (e) {
    log?.error({ event, err: redactLogFields(e) }, message);
    throw new BrokerError('CONFIG_SECRET_UNAVAILABLE');
  }
}

/**
 * The one log line of a request a front door refused or failed: an internal error as an
 * error with its cause (redacted), any other refusal as a warning.
 */
export function logRefused(
  log: Logger | undefined,
  door: 'daemon' | 'serve',
  line: Record<string, unknown> & { code: string },
  started: number,
  e: unknown,
): void {
  const fields = { ...line, durationMs: Math.round(performance.now() - started) };
  if (line.code === 'INTERNAL_ERROR')
    log?.error({ ...fields, err: redactLogFields(e) }, `${door} request failed`);
  else log?.warn(fields, `${door} request refused`);
}
