/**
 * The one catalogue of clibroker's error codes. Every code is defined once, with the HTTP
 * status the child sees (where it sees one), the side that caused it and whether retrying the
 * same thing can succeed. Codes are never renamed or reused. `docs/errors.md` is generated from
 * the catalogue (`npm run docs:errors`) and a test keeps the two in sync. (In the source, the
 * codes are the plain data of `error-catalogue.ts` and their words `error-messages.ts`; this
 * module renders them and is the package's `clibroker/errors`.)
 *
 * The catalogue owns the words too: a code's message template lives in `error-messages.ts`, and
 * call sites pass data to `brokerError`, `policyError` or `errorMessage`, which render `CODE: …`.
 * Codes are append-only: `tests/errors/codes.snapshot.txt` lists every code ever shipped.
 *
 * @module clibroker/errors
 */
import { CATALOGUE, type ErrorCode, type ErrorSide } from './error-catalogue.js';
import { MESSAGES } from './error-messages.js';
export { CATALOGUE, type ErrorCode, type ErrorSide, type ErrorSpec } from './error-catalogue.js';

/** Standard reason phrases (az prints the phrase verbatim, so it must never be empty). */
export const REASON_PHRASES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  407: 'Proxy Authentication Required',
  410: 'Gone',
  413: 'Payload Too Large',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  504: 'Gateway Timeout',
};

/** What a throw site passes besides the code: data for the message, never the message's wording. */
export interface BrokerErrorOptions {
  /**
   * A message already rendered by the catalogue (a decision's reason carried to the refusal);
   * a call site that has data passes it to `brokerError` instead of writing prose here.
   */
  message?: string;
  /** for POLICY_BLOCKED: the rule that refused */
  policyCode?: ErrorCode;
  details?: Record<string, unknown>;
  cause?: unknown;
}

/** The one error class: core functions throw it, never return sentinel prose. */
export class BrokerError extends Error {
  readonly code: ErrorCode;
  readonly policyCode: ErrorCode | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, opts: BrokerErrorOptions = {}) {
    super(
      opts.message ?? defaultMessage(code, opts.policyCode),
      opts.cause === undefined ? undefined : { cause: opts.cause },
    );
    this.name = 'BrokerError';
    this.code = code;
    this.policyCode = opts.policyCode;
    // A policy refusal names its rule in details.policyCode too: the refusal body, the CLI envelope
    // and a host's failure all read it from the same place.
    this.details = opts.policyCode ? { ...opts.details, policyCode: opts.policyCode } : opts.details;
  }

  /** HTTP status the child sees (POLICY_BLOCKED takes the policy code's, which is 422 too). */
  get status(): number {
    return CATALOGUE[this.code].status ?? 500;
  }

  get retry(): boolean {
    return CATALOGUE[this.code].retry;
  }

  get side(): ErrorSide {
    return CATALOGUE[this.code].side;
  }

  /** The error as the envelope carries it: code, message, and the policy code and details when set. */
  toJSON(): { code: ErrorCode; message: string; policyCode?: ErrorCode; details?: Record<string, unknown> } {
    return {
      code: this.code,
      message: this.message,
      ...(this.policyCode ? { policyCode: this.policyCode } : {}),
      ...(this.details ? { details: this.details } : {}),
    };
  }
}

/** Every message template of the catalogue, by code (see src/error-messages.ts). */
export type Messages = typeof MESSAGES;

/** The codes whose message is rendered from data (their template is a function). */
export type TemplatedCode = {
  [C in keyof Messages]: Messages[C] extends (...a: never[]) => string ? C : never;
}[keyof Messages];

/** The data a templated code's message is rendered from. */
export type MessageData<C extends TemplatedCode> = Messages[C] extends (
  d: infer D,
  ...rest: never[]
) => string
  ? D
  : never;

/** Options of an error built from data: everything but the message, which the template renders. */
export type DataErrorOptions = Omit<BrokerErrorOptions, 'message' | 'policyCode'>;

/** `CODE: …` rendered from the code's template. The one way a message names its code. */
export function errorMessage<C extends TemplatedCode>(code: C, data: MessageData<C>): string {
  const template = MESSAGES[code] as (d: MessageData<C>, c: typeof CATALOGUE) => string;
  return `${code}: ${template(data, CATALOGUE)}`;
}

/** A BrokerError whose message the catalogue renders from `data`. */
export function brokerError<C extends TemplatedCode>(
  code: C,
  data: MessageData<C>,
  opts: DataErrorOptions = {},
): BrokerError {
  return new BrokerError(code, { ...opts, message: errorMessage(code, data) });
}

/** A policy refusal: POLICY_BLOCKED naming the rule, with the rule's message (`RULE: …`). */
export function policyError<C extends TemplatedCode>(
  policyCode: C,
  data: MessageData<C>,
  opts: DataErrorOptions = {},
): BrokerError {
  return new BrokerError('POLICY_BLOCKED', { ...opts, policyCode, message: errorMessage(policyCode, data) });
}

/**
 * A message as read beside its code (a page that shows the code on its own): without the
 * `CODE: ` or `CODE (RULE): ` it starts with. A message that does not start with its own code
 * is returned whole.
 */
export function messageWithoutCode(e: { code: string; message: string }): string {
  const m = /^([A-Z][A-Z0-9_]*)(?: \([A-Z][A-Z0-9_]*\))?: /.exec(e.message);
  return m && m[1] === e.code ? e.message.slice(m[0].length) : e.message;
}

/** A code's message without data: its fixed sentence, or its summary and remedy. */
function defaultMessage(code: ErrorCode, policyCode?: ErrorCode): string {
  const rule = policyCode ?? code;
  const s = CATALOGUE[rule];
  const fixed = (MESSAGES as Readonly<Partial<Record<ErrorCode, unknown>>>)[rule];
  const head = policyCode ? `${code} (${policyCode})` : code;
  if (typeof fixed === 'string') return `${head}: ${fixed}`;
  return `${head}: ${s.summary}${s.remedy ? ` ${s.remedy}` : ''}`;
}

/** Whether `e` is a `BrokerError`. */
export function isBrokerError(e: unknown): e is BrokerError {
  return e instanceof BrokerError;
}

/** Whether `s` names a code of the catalogue. */
export function isErrorCode(s: string): s is ErrorCode {
  return Object.hasOwn(CATALOGUE, s);
}

/**
 * What a failed dynamic import of a feature's module becomes: DEPENDENCY_MISSING when Node
 * could not find the optional peer package `pkg` itself (named in its message), naming the
 * package to install; anything else (another package missing, a broken install, a syntax
 * error) is returned as it was, to be rethrown.
 * @internal
 */
export function missingPeer(err: unknown, pkg: string, feature: string): unknown {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (
    e?.code !== 'ERR_MODULE_NOT_FOUND' ||
    typeof e.message !== 'string' ||
    !e.message.includes(`Cannot find package '${pkg}'`)
  )
    return err;
  return brokerError(
    'DEPENDENCY_MISSING',
    { package: pkg, feature },
    { details: { package: pkg }, cause: err },
  );
}
