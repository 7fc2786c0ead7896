/**
 * The thin client of the broker daemon, used by `clibroker run` and `clibroker resume`. It
 * imports only node:http, the error catalogue and the protocol's constants, so a command
 * that talks to the daemon starts as fast as `--help`: no zod, no broker, no store.
 */
import { request } from 'node:http';
import { BrokerError, isErrorCode, brokerError } from '../errors.js';
import type { Reply } from './protocol.js';

export interface DaemonAddress {
  /** the unix socket path */
  socket: string;
  /** the executor token, sent as `Authorization: Bearer`; never logged, never in argv */
  token?: string;
  /** give up after this long (default: wait as long as the daemon's run takes) */
  timeoutMs?: number;
}

/** The largest answer read (stdout and stderr are at most 2 MiB together, JSON-escaped). */
const MAX_REPLY_BYTES = 64 * 1024 * 1024;

// why, and what to do (the catalogue's remedy, which the CLI shows as the hint, says the rest)
const NOT_REACHED: Readonly<Record<string, string>> = {
  ENOENT: 'no socket at that path: is the daemon running, and is this its socket?',
  ECONNREFUSED: 'nothing is listening on it: the daemon stopped',
  EACCES: "no permission to connect: the operator adds this user to the socket's group",
  EPERM: "no permission to connect: the operator adds this user to the socket's group",
  ENOTDIR: 'a directory on the path does not exist',
  ENOTSOCK: 'the path is not a socket',
};

function unavailable(socket: string, code: string | undefined): BrokerError {
  const why = (code && NOT_REACHED[code]) ?? `it cannot be reached (${code ?? 'unknown error'})`;
  return brokerError(
    'DAEMON_UNAVAILABLE',
    { socket, why },
    { details: { socket, ...(code ? { errno: code } : {}) } },
  );
}

function noAnswer(socket: string, why: string): BrokerError {
  return brokerError('DAEMON_NO_ANSWER', { socket, why }, { details: { socket } });
}

/** The daemon's failure as the BrokerError it was; a code this build does not know is a broken answer. */
function fromWire(socket: string, reply: unknown): BrokerError {
  const error = (reply as { error?: { code?: unknown; message?: unknown; details?: unknown } }).error;
  if (!error || typeof error.code !== 'string' || !isErrorCode(error.code))
    return noAnswer(socket, 'answered a failure without a known code');
  const details =
    typeof error.details === 'object' && error.details !== null && !Array.isArray(error.details)
      ? (error.details as Record<string, unknown>)
      : undefined;
  const policyCode =
    typeof details?.['policyCode'] === 'string' && isErrorCode(details['policyCode'])
      ? details['policyCode']
      : undefined;
  return new BrokerError(error.code, {
    ...(typeof error.message === 'string' && error.message ? { message: error.message } : {}),
    ...(details ? { details } : {}),
    ...(policyCode ? { policyCode } : {}),
  });
}

/**
 * One call to the daemon: the answer's `result`, or its failure thrown as a BrokerError
 * with the daemon's code and details.
 * @throws BrokerError DAEMON_UNAVAILABLE (the socket cannot be reached: nothing ran),
 *   DAEMON_NO_ANSWER (the connection ended or the answer was broken after the request went out),
 *   or the code the daemon answered with
 */
export function callDaemon<T = unknown>(
  addr: DaemonAddress,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<T> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
  return new Promise<T>((resolve, reject) => {
    let sent = false;
    const req = request({
      socketPath: addr.socket,
      // a fresh connection per call: `connect` then marks the moment the request can have gone out
      agent: false,
      method,
      path,
      headers: {
        host: 'clibroker',
        ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
        ...(addr.token ? { authorization: `Bearer ${addr.token}` } : {}),
      },
      ...(addr.timeoutMs ? { timeout: addr.timeoutMs } : {}),
    });
    req.once('socket', (s) => s.once('connect', () => (sent = true)));
    req.once('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    req.once('error', (e: NodeJS.ErrnoException) => {
      reject(
        sent
          ? noAnswer(addr.socket, `ended the connection before answering (${e.code ?? 'error'})`)
          : unavailable(addr.socket, e.code),
      );
    });
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_REPLY_BYTES) {
          res.destroy();
          reject(noAnswer(addr.socket, `answered more than ${MAX_REPLY_BYTES} bytes`));
        } else chunks.push(c);
      });
      res.once('error', () =>
        reject(noAnswer(addr.socket, 'ended the connection in the middle of its answer')),
      );
      res.once('end', () => {
        let reply: Reply<T> | undefined;
        try {
          reply = JSON.parse(Buffer.concat(chunks, size).toString('utf8')) as Reply<T>;
        } catch {
          reply = undefined;
        }
        if (reply?.ok === true && 'result' in reply) resolve(reply.result);
        else if (reply?.ok === false) reject(fromWire(addr.socket, reply));
        else reject(noAnswer(addr.socket, `answered HTTP ${res.statusCode} without its JSON envelope`));
      });
    });
    req.end(payload);
  });
}
