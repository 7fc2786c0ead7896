/**
 * The one answer shape of every surface (issue 6): `{success:true,data}` or
 * `{success:false,error:{type,flag?,message,got?,expected?,hint?,example?}}` on stdout, one
 * prose line on stderr, exit 1 (2 for an unknown command). Parsing code throws
 * `CliFailure`; the surfaces turn it — or whatever the core function threw — into JSON here.
 */
import { redactSecrets } from '../credentials/secret-shape.js';
import { CATALOGUE, isBrokerError, type ErrorCode } from '../errors.js';
import type { Envelope, EnvelopeError, ErrorType } from './types.js';

/** How much of a bad value an envelope repeats back. */
export const GOT_MAX = 80;

/** Shorten `got` to about 80 characters (the agent needs the start, not the whole payload). */
export function truncate(s: string, max = GOT_MAX): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/** A failure found before or around the core function, carrying its envelope fields. */
export class CliFailure extends Error {
  readonly error: EnvelopeError;
  constructor(error: EnvelopeError) {
    super(error.message);
    this.name = 'CliFailure';
    // Secret-shaped values an agent typed into argv are never echoed back (DESIGN: secrets never leak).
    this.error = error.got === undefined ? error : { ...error, got: truncate(redactSecrets(error.got)) };
  }
}

/** Shorthand for throwing a typed failure. */
export function fail(type: ErrorType, message: string, fields: Omit<EnvelopeError, 'type' | 'message'> = {}): never {
  throw new CliFailure({ type, message, ...fields });
}

// Codes where the fix is a credential or identity, not the input or a retry.
const AUTH_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'CLI_PROXY_AUTH_REQUIRED',
  'IDENTITY_NOT_CONFIGURED',
  'TOOL_VENDOR_CLI_CREDENTIAL_UNBOUND',
  'TOOL_VENDOR_CLI_CREDENTIAL_HOSTS_REQUIRED',
]);

/**
 * The envelope error for anything a core function threw: `auth` for credential failures,
 * `runtime` for the rest. A BrokerError's catalogue remedy becomes the hint.
 */
export function errorFromThrown(e: unknown): EnvelopeError {
  if (e instanceof CliFailure) return e.error;
  if (isBrokerError(e)) {
    const spec = CATALOGUE[e.code];
    const type: ErrorType = spec.side === 'credential' || AUTH_CODES.has(e.code) ? 'auth' : 'runtime';
    const remedy = e.policyCode ? CATALOGUE[e.policyCode].remedy : spec.remedy;
    return { type, message: e.message, ...(remedy ? { hint: remedy } : {}) };
  }
  const message = e instanceof Error ? e.message : String(e);
  return { type: 'runtime', message: message || 'the command failed without a message' };
}

/** A success envelope. */
export function ok<T>(data: T): Envelope<T> {
  return { success: true, data };
}

/** A failure envelope. */
export function failure(error: EnvelopeError): Envelope<never> {
  return { success: false, error };
}

/** The process exit code for an envelope. */
export function exitCode(env: Envelope): number {
  if (env.success) return 0;
  return env.error.type === 'unknown-command' ? 2 : 1;
}

/** The one stderr line: the message, then the hint, on a single line. */
export function proseLine(program: string, error: EnvelopeError): string {
  const flag = error.flag ? ` (${error.flag.split(',').map((f) => `--${f}`).join(', ')})` : '';
  const hint = error.hint ? ` (${error.hint})` : '';
  return `${program}: ${error.type}${flag}: ${error.message}${hint}`.replace(/\s*\n\s*/g, ' ');
}
