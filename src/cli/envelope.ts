/**
 * The one answer shape of every surface: `{success:true,data}` or
 * `{success:false,error:{type,flag?,message,got?,expected?,hint?,example?,retry?,code,details?}}` on
 * stdout, one prose line on stderr, exit 1 (2 for an unknown command). Parsing code throws
 * `CliFailure`; the surfaces turn it — or whatever the core function threw — into JSON here.
 *
 * `failure()` is the one place a failure envelope is built, and the stderr line is made
 * from its result: every text field is redacted with the secret-shape detector and capped
 * there, so no call site can echo a token or a 10 KB argument by forgetting to.
 */
import { redactSecrets } from '../audit/secret-shape.js';
import { CATALOGUE, isBrokerError, type ErrorCode } from '../errors.js';
import type { Envelope, EnvelopeError, ErrorType } from './types.js';

/**
 * How much of one piece of input an envelope repeats back (`got`, and input quoted in a
 * message): enough to recognise what was meant, and no more, so an agent reading the
 * envelope sees what was wrong rather than its own payload again.
 */
export const ECHO_MAX = 80;

/** How much of one string of `details` is kept: data of the failure (a path, a host), not echoed input. */
const DETAIL_STRING_MAX = 200;

/** Caps of the other fields: they hold prose plus capped input, or a whole command line. */
const FIELD_MAX: Readonly<Record<'message' | 'expected' | 'hint', number>> = {
  message: 600,
  expected: 600,
  hint: 600,
};
/** A corrected or example command line longer than this is not offered: it could not be echoed whole. */
export const COMMAND_MAX = 2000;

// A terminal acts on these; echoed input on stderr shows them escaped instead.
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const WINDOW = 1024;
const CUT_RE = /… \(\d+ chars\)$/;

/**
 * Input fit to echo: secret-shaped substrings become `[REDACTED]` (before cutting, so a
 * cut never leaves a secret too short to recognise), then anything over `max` characters
 * is cut with an ellipsis and the original length. Idempotent.
 */
export function echo(s: string, max = ECHO_MAX): string {
  // Only a window past the cap is scanned: the detector's patterns are not linear on long
  // runs, and a secret cut at the window's end lies past the cap anyway (a PEM block is
  // redacted to the end of the text).
  const r = redactSecrets(s.length > max + WINDOW ? s.slice(0, max + WINDOW) : s);
  if (r.length <= max || (CUT_RE.test(r) && r.length <= max + 24)) return r;
  return `${r.slice(0, max)}… (${s.length} chars)`;
}

/** The pre-redaction name for `echo`. */
export function truncate(s: string, max = ECHO_MAX): string {
  return echo(s, max);
}

/** Every text field of an error, redacted and capped: the rule for anything a surface prints. */
export function sanitizeError(error: EnvelopeError): EnvelopeError {
  const out: EnvelopeError = {
    type: error.type,
    message: echo(error.message, FIELD_MAX.message) || 'the command failed without a message',
  };
  if (error.flag !== undefined) out.flag = echo(error.flag, ECHO_MAX);
  if (error.got !== undefined) out.got = echo(error.got, ECHO_MAX);
  if (error.expected !== undefined) out.expected = echo(error.expected, FIELD_MAX.expected);
  if (error.hint !== undefined) out.hint = echo(error.hint, FIELD_MAX.hint);
  for (const k of ['example', 'retry'] as const) {
    const v = error[k];
    // a command line is only useful whole: one that had to be redacted or cut is dropped
    if (v !== undefined && v.length <= COMMAND_MAX && redactSecrets(v) === v) out[k] = v;
  }
  out.code = error.code === undefined ? CODE_OF_TYPE[error.type] : echo(error.code, 64);
  if (error.details !== undefined) {
    const details = cleanDetail(error.details, 0);
    // bounded per entry, and as a whole: a list of every offered tool fits, a dump does not
    if (details !== undefined && JSON.stringify(details).length <= DETAILS_MAX)
      out.details = details as Record<string, unknown>;
  }
  return out;
}

/**
 * The code of a failure that names none: what the type says happened. Every envelope carries a
 * catalogue code, so an agent branches on `error.code` and never on the prose.
 */
const CODE_OF_TYPE: Readonly<Record<ErrorType, ErrorCode>> = {
  'unknown-command': 'COMMAND_UNKNOWN',
  'flag-parse': 'COMMAND_INPUT_INVALID',
  'json-parse': 'COMMAND_INPUT_INVALID',
  'missing-required': 'COMMAND_INPUT_INVALID',
  'enum-mismatch': 'COMMAND_INPUT_INVALID',
  'unknown-flag': 'COMMAND_INPUT_INVALID',
  auth: 'CONNECTION_INVALID',
  // an uncoded error thrown by a core function: nothing more precise is known about it
  runtime: 'INTERNAL_ERROR',
};

/** The longest `details` an envelope carries, as JSON; longer ones are left out. */
const DETAILS_MAX = 8192;

/** A value of `details` fit to print: strings echoed, at most 32 entries per level, 4 levels. */
function cleanDetail(v: unknown, depth: number): unknown {
  if (typeof v === 'string') return echo(v, DETAIL_STRING_MAX);
  if (v === null || typeof v === 'number' || typeof v === 'boolean') return v;
  if (depth >= 4 || typeof v !== 'object') return undefined;
  if (Array.isArray(v)) return v.slice(0, 32).map((x) => cleanDetail(x, depth + 1) ?? null);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v).slice(0, 32)) {
    const c = cleanDetail(x, depth + 1);
    if (c !== undefined) out[echo(k, 64)] = c;
  }
  return out;
}

/** Fields a parsing step may attach: the envelope's, plus the corrected words of the command. */
export type FailureFields = Omit<EnvelopeError, 'type' | 'message'> & {
  /**
   * The invocation with this mistake corrected, as argv words (after the command path when
   * thrown while parsing a command's flags, the whole argv when thrown while routing). The
   * CLI renders it into `retry`; it never appears in the envelope as words.
   */
  fix?: readonly string[];
};

/** A failure found before or around the core function, carrying its envelope fields. */
export class CliFailure extends Error {
  readonly error: EnvelopeError;
  readonly fix: readonly string[] | undefined;
  /** whether the thrower named the code (a back-end's answer, a state), not just the type's own */
  readonly coded: boolean;
  constructor(error: EnvelopeError, fix?: readonly string[]) {
    const clean = sanitizeError(error);
    super(clean.message);
    this.name = 'CliFailure';
    this.error = clean;
    this.fix = fix;
    this.coded = error.code !== undefined;
  }
}

/** Shorthand for throwing a typed failure. */
export function fail(type: ErrorType, message: string, fields: FailureFields = {}): never {
  const { fix, ...rest } = fields;
  throw new CliFailure({ type, message, ...rest }, fix);
}

// Codes where the fix is a credential or identity, not the input or a retry.
const AUTH_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'CLI_PROXY_AUTH_REQUIRED',
  'IDENTITY_NOT_CONFIGURED',
  'TOOL_VENDOR_CLI_CREDENTIAL_UNBOUND',
  'TOOL_VENDOR_CLI_CREDENTIAL_HOSTS_REQUIRED',
  'DAEMON_UNAUTHORIZED',
]);

/**
 * The envelope error for anything a core function threw: `auth` for credential failures,
 * `runtime` for the rest. A BrokerError's catalogue remedy becomes the hint, and its code
 * and details (the policy code among them) are carried as fields, so no reader parses prose.
 */
export function errorFromThrown(e: unknown): EnvelopeError {
  if (e instanceof CliFailure) return e.error;
  if (isBrokerError(e)) {
    const spec = CATALOGUE[e.code];
    const type: ErrorType = spec.side === 'credential' || AUTH_CODES.has(e.code) ? 'auth' : 'runtime';
    const remedy = e.policyCode ? CATALOGUE[e.policyCode].remedy : spec.remedy;
    const details = e.policyCode ? { ...e.details, policyCode: e.policyCode } : e.details;
    return {
      type,
      message: e.message,
      ...(remedy ? { hint: remedy } : {}),
      code: e.code,
      ...(details ? { details } : {}),
    };
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
  return { success: false, error: sanitizeError(error) };
}

/** The process exit code for an envelope. */
export function exitCode(env: Envelope): number {
  if (env.success) return 0;
  return env.error.type === 'unknown-command' ? 2 : 1;
}

/** The one stderr line: the message, then the hint, on a single line (fields sanitized like the envelope's). */
export function proseLine(program: string, raw: EnvelopeError): string {
  const error = sanitizeError(raw);
  const flag = error.flag
    ? ` (${error.flag
        .split(',')
        // a flag typed with one dash (`-m`) keeps it: the field names it as typed
        .map((f) => (f.startsWith('-') ? f : `--${f}`))
        .join(', ')})`
    : '';
  const hint = error.hint ? ` (${error.hint})` : '';
  return `${program}: ${error.type}${flag}: ${error.message}${hint}`
    .replace(/\s*\n\s*/g, ' ')
    .replace(CONTROL_RE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
