/**
 * The logger clibroker recommends hosts pass as `logger` (STYLE: redact from an allow-list
 * inside the logger, pino `redact`, fed from the same list the strip phase uses). clibroker
 * itself never logs a header or a body; this is the second line of defence for what a host
 * or a later change might log: any key named like a credential-bearing header is censored,
 * at the top level and one or two objects deep (`headers.authorization`, `req.headers[…]`).
 */
import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';
import { STRIPPED_HEADERS } from '../broker/headers.js';

/** Header names whose values carry credentials: the strip phase's list plus the ones vendors use. */
export const CREDENTIAL_HEADERS: readonly string[] = [
  ...[...STRIPPED_HEADERS].filter((h) => h.includes('auth')),
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

/** A pino logger with clibroker's redaction; extra options are merged (extra redact paths added). */
export function createLogger(opts: LoggerOptions = {}, destination?: DestinationStream): Logger {
  const extra = Array.isArray(opts.redact) ? opts.redact : (opts.redact?.paths ?? []);
  const options: LoggerOptions = { name: 'clibroker', ...opts, redact: { paths: [...REDACT_PATHS, ...extra], censor: '[REDACTED]' } };
  return destination ? pino(options, destination) : pino(options);
}
