/**
 * The logger clibroker recommends hosts pass as `logger`: it redacts inside the logger, from an
 * allow-list fed by the same credential headers the strip phase removes. clibroker
 * itself never logs a header or a body; this is the second line of defence for what a host
 * or a later change might log: any key named like a credential-bearing header is censored,
 * at the top level and one or two objects deep (`headers.authorization`, `req.headers[…]`).
 */
import { createRequire } from 'node:module';
import type { DestinationStream, Logger, LoggerOptions } from 'pino';
import { CHILD_CREDENTIAL_HEADERS } from './redact.js';
import { REDACTED, redactSecrets } from './secret-shape.js';

// pino is loaded by the first createLogger call, not when clibroker is imported.
let pinoModule: typeof import('pino') | undefined;
const loadPino = (): typeof import('pino') =>
  (pinoModule ??= createRequire(import.meta.url)('pino') as typeof import('pino'));

/** Header names whose values carry credentials: the ones the strip phase removes plus the ones vendors use. */
export const CREDENTIAL_HEADERS: readonly string[] = [
  ...CHILD_CREDENTIAL_HEADERS,
  'cookie',
  'set-cookie',
  'x-api-key',
  'api-key',
  'x-auth-token',
];

/** pino redact paths for every credential header name, at depths 0–2. */
export const REDACT_PATHS: readonly string[] = CREDENTIAL_HEADERS.flatMap((h) => {
  const key = `["${h}"]`;
  return [key, `*${key}`, `*.*${key}`];
});

/**
 * A pino logger with clibroker's redaction; extra options are merged (extra redact paths added).
 * Lines carry one `time`, an ISO 8601 string like an audit event's (`timestamp` overrides it).
 */
export function createLogger(opts: LoggerOptions = {}, destination?: DestinationStream): Logger {
  const { pino, stdTimeFunctions } = loadPino();
  const extra = Array.isArray(opts.redact) ? opts.redact : (opts.redact?.paths ?? []);
  const options: LoggerOptions = {
    name: 'clibroker',
    timestamp: stdTimeFunctions.isoTime,
    ...opts,
    redact: { paths: [...REDACT_PATHS, ...extra], censor: '[REDACTED]' },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** Longest string a broker log line carries per field; longer ones are cut. */
export const MAX_LOGGED_STRING = 256;

/** `user:secret@` before a host (a CONNECT target, an authority), with or without a scheme. */
const USERINFO_RE = /(^|[\s/"'=(])[^\s/"'@=()]+@(?=[^\s@]*[a-z0-9])/gi;

/**
 * The longest refusal message an audit event carries. It is what the caller is told (the
 * writes of unknown outcome, what capped the tier), so it gets more room than other fields.
 */
export const MAX_REFUSAL_REASON = 1024;

/**
 * A string as a log line may carry it: cut to `max` (MAX_LOGGED_STRING unless said), userinfo
 * removed, every secret-shaped substring replaced. Applied to every string the broker logs.
 */
export function redactLogText(value: string, max: number = MAX_LOGGED_STRING): string {
  const cut = value.length > max ? `${value.slice(0, max)}…` : value;
  return redactSecrets(cut.replace(USERINFO_RE, `$1${REDACTED}@`));
}

/** Log fields made safe: strings redacted and capped, errors reduced to name, code and a redacted message. */
export function redactLogFields(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactLogText(value);
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    // Only a coded error's message is ours (the catalogue, node, undici) and is logged, redacted.
    // An uncoded one comes from a host's hook (a credential stamper): its text could be anything.
    const code = (value as { code?: unknown }).code;
    if (typeof code !== 'string')
      return { name: redactLogText(value.name), message: '[not logged: uncoded error]' };
    return {
      name: redactLogText(value.name),
      code: redactLogText(code),
      message: redactLogText(value.message),
    };
  }
  if (depth >= 3) return '[object]';
  if (Array.isArray(value)) return value.slice(0, 16).map((v) => redactLogFields(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    out[k] = CREDENTIAL_HEADERS.includes(k.toLowerCase()) ? REDACTED : redactLogFields(v, depth + 1);
  return out;
}

/** The broker's log lines: built only here, so nothing reaches the host's logger unredacted. */
export interface BrokerLog {
  debug(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
  error(fields: Record<string, unknown>, msg: string): void;
}

/**
 * Wraps the host's logger (whatever it is: it need not come from createLogger). The broker
 * never logs through the raw logger except the canonical audit line, whose fields are
 * redacted when the event is built.
 */
export function brokerLog(logger: Logger | undefined): BrokerLog | undefined {
  if (!logger) return undefined;
  const line = (level: 'debug' | 'warn' | 'error') => (fields: Record<string, unknown>, msg: string) => {
    if (logger.isLevelEnabled(level)) logger[level](redactLogFields(fields) as object, redactLogText(msg));
  };
  return { debug: line('debug'), warn: line('warn'), error: line('error') };
}
