/**
 * The engine's options, checked where they enter: `createBroker` and `openSession` refuse a
 * malformed or out-of-range option with a catalogue code naming the field (`details.path`)
 * and why (`details.reason`), before anything starts. Hand checks, run once per broker and
 * once per session, never per request.
 *
 * @throws BrokerError BROKER_OPTIONS_INVALID, SESSION_OPTIONS_INVALID
 */
import { type BrokerError, brokerError } from '../errors.js';
import { isDnsName } from '../policy/dns-name.js';
import { parseCidr } from './address.js';
import { type BrokerOptions, DEFAULT_LIMITS, type Limits, type SessionOptions } from './types.js';

/**
 * The highest deadline a session may have: a call runs at most 270 s, and the runner's
 * session outlives its child by 5 s so the last requests are still audited.
 */
export const MAX_SESSION_DEADLINE_MS = 275_000;

/** Each limit's ceiling; the others are only positive whole numbers. */
const LIMIT_CEILING: Partial<Record<keyof Limits, number>> = { deadlineMs: MAX_SESSION_DEADLINE_MS };

/** The codes of an option refused where it enters the public API. */
export type OptionCode =
  | 'BROKER_OPTIONS_INVALID'
  | 'SESSION_OPTIONS_INVALID'
  | 'RUNNER_OPTIONS_INVALID'
  | 'RUN_INPUT_INVALID';

/** The refusal for one option: `path` names the field as written (`egress[2]`, `limits.deadlineMs`). */
export function optionInvalid(code: OptionCode, path: string, reason: string): BrokerError {
  return brokerError(code, { path, reason }, { details: { path, reason } });
}

type Fail = (path: string, reason: string) => never;

const failWith =
  (code: OptionCode): Fail =>
  (path, reason) => {
    throw optionInvalid(code, path, reason);
  };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function optionalFn(o: Record<string, unknown>, key: string, path: string, fail: Fail): void {
  if (o[key] !== undefined && typeof o[key] !== 'function') fail(`${path}${key}`, 'must be a function');
}

function checkLimits(limits: unknown, path: string, fail: Fail): void {
  if (limits === undefined) return;
  if (!isObject(limits)) fail(path, 'must be an object of limits');
  for (const [key, value] of Object.entries(limits)) {
    if (!Object.hasOwn(DEFAULT_LIMITS, key)) fail(`${path}.${key}`, 'is not a limit');
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0)
      fail(`${path}.${key}`, 'must be a positive whole number');
    const ceiling = LIMIT_CEILING[key as keyof Limits];
    if (ceiling !== undefined && value > ceiling) fail(`${path}.${key}`, `must be at most ${ceiling}`);
  }
}

function checkHosts(hosts: unknown, path: string, fail: Fail): void {
  if (!Array.isArray(hosts)) fail(path, 'must be an array of host names');
  hosts.forEach((h: unknown, i) => {
    if (typeof h !== 'string' || !isDnsName(h))
      fail(
        `${path}[${i}]`,
        'must be an exact lower-case DNS name (no wildcard, IP address, port or trailing dot)',
      );
  });
}

/** `createBroker`'s options. */
export function checkBrokerOptions(opts: BrokerOptions): void {
  const fail: Fail = failWith('BROKER_OPTIONS_INVALID');
  if (!isObject(opts)) fail('options', 'must be an object');
  const o = opts as Record<string, unknown>;
  if (o['ca'] !== undefined) {
    const ca = o['ca'];
    if (!isObject(ca)) fail('ca', 'must be { certPem, keyPem }');
    for (const k of ['certPem', 'keyPem'])
      if (typeof ca[k] !== 'string' || ca[k] === '') fail(`ca.${k}`, 'must be a PEM string');
  }
  const up = o['upstream'];
  if (up !== undefined) {
    if (!isObject(up)) fail('upstream', 'must be an object');
    const ca = up['ca'];
    if (
      ca !== undefined &&
      typeof ca !== 'string' &&
      !(Array.isArray(ca) && ca.every((c) => typeof c === 'string'))
    )
      fail('upstream.ca', 'must be a PEM string or an array of them');
    optionalFn(up, 'resolve', 'upstream.', fail);
    optionalFn(up, 'lookup', 'upstream.', fail);
    const allow = up['allowAddresses'];
    if (allow !== undefined) {
      if (!Array.isArray(allow))
        fail('upstream.allowAddresses', 'must be an array of address ranges such as ["127.0.0.0/8"]');
      allow.forEach((entry: unknown, i) => {
        try {
          parseCidr(entry);
        } catch (err) {
          fail(`upstream.allowAddresses[${i}]`, (err as Error).message);
        }
      });
    }
    const n = up['connections'];
    if (n !== undefined && (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0))
      fail('upstream.connections', 'must be a positive whole number');
  }
  checkLimits(o['limits'], 'limits', fail);
  if (o['logger'] !== undefined && !isObject(o['logger'])) fail('logger', 'must be a pino logger');
  optionalFn(o, 'onAudit', '', fail);
  optionalFn(o, 'onTunnel', '', fail);
  const port = o['port'];
  if (
    port !== undefined &&
    (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65_535)
  )
    fail('port', 'must be a whole number from 0 to 65535');
}

/** `openSession`'s options. */
export function checkSessionOptions(opts: SessionOptions): void {
  const fail: Fail = failWith('SESSION_OPTIONS_INVALID');
  if (!isObject(opts)) fail('options', 'must be an object');
  const o = opts as unknown as Record<string, unknown>;
  checkHosts(o['egress'], 'egress', fail);
  if (o['tier'] !== undefined && o['tier'] !== 'read' && o['tier'] !== 'write')
    fail('tier', "must be 'read' or 'write'");
  checkLimits(o['limits'], 'limits', fail);
  const cred = o['credentials'];
  if (cred !== undefined) {
    if (!isObject(cred) || typeof cred['authorizationFor'] !== 'function')
      fail('credentials', 'must be a credential stamper with authorizationFor(host)');
    optionalFn(cred, 'intercept', 'credentials.', fail);
    if (cred['extraHosts'] !== undefined) checkHosts(cred['extraHosts'], 'credentials.extraHosts', fail);
  }
  optionalFn(o, 'decide', '', fail);
  optionalFn(o, 'onAudit', '', fail);
  if (o['overrides'] !== undefined && !Array.isArray(o['overrides']))
    fail('overrides', 'must be an array of wire-policy overrides');
  if (o['nameConstrainedCa'] !== undefined && typeof o['nameConstrainedCa'] !== 'boolean')
    fail('nameConstrainedCa', 'must be a boolean');
  const labels = o['labels'];
  if (labels !== undefined) {
    if (!isObject(labels)) fail('labels', 'must be an object of strings');
    for (const [k, v] of Object.entries(labels))
      if (typeof v !== 'string') fail(`labels.${k}`, 'must be a string');
  }
}
