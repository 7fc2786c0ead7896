/**
 * The thin client of the broker daemon, used by `clibroker run` and `clibroker resume`: one
 * exchange (`./call.ts`, node:net alone) and its outcome as the answer's `result` or a coded
 * BrokerError. It imports only node built-ins, the error catalogue, the protocol's constants
 * and the small path-trust helper, so a command that talks to the daemon starts as fast as
 * `--help`: no zod, no broker, no store.
 *
 * Before it connects it checks the socket's directory (`socketDirProblem`): a socket in a
 * directory that this user, or anyone but root and the directory's owner, could write may
 * have been swapped for an impostor, and the token and arguments are not sent to it.
 */
import { BrokerError, isErrorCode, brokerError } from '../errors.js';
import {
  type CallOutcome,
  type DaemonAddress,
  exchange,
  resultOf,
  replyOf,
  socketDirProblem,
} from './call.js';

export { type DaemonAddress, type SocketDirProblem, socketDirProblem } from './call.js';

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
 * with the daemon's code and details. The socket's directory is checked first
 * (`socketDirProblem`); nothing is sent through a socket that could be an impostor.
 * @throws BrokerError DAEMON_SOCKET_DIR_UNSAFE (the socket's directory lets this user or
 *   another replace it: nothing was sent), DAEMON_UNAVAILABLE (the socket cannot be reached:
 *   nothing ran), DAEMON_NO_ANSWER (the connection ended or the answer was broken after the
 *   request went out), or the code the daemon answered with
 */
export async function callDaemon<T = unknown>(
  addr: DaemonAddress,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<T> {
  const problem = await socketDirProblem(addr.socket);
  if (problem)
    throw brokerError(
      'DAEMON_SOCKET_DIR_UNSAFE',
      { socket: addr.socket, ...problem, side: 'client' },
      { details: { socket: addr.socket, ...problem, side: 'client' } },
    );
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
  return settle<T>(addr.socket, await exchange(addr, method, path, payload));
}

/**
 * An exchange's outcome as `callDaemon` answers it: the `result`, or the failure thrown.
 * `clibroker run`'s fast path, which makes the exchange itself, settles it here too.
 * @throws BrokerError DAEMON_UNAVAILABLE, DAEMON_NO_ANSWER, or the code the daemon answered with
 */
export function settle<T = unknown>(socket: string, outcome: CallOutcome): T {
  if (!outcome.sent) throw unavailable(socket, outcome.errno);
  if ('lost' in outcome) throw noAnswer(socket, outcome.lost);
  const ok = resultOf(outcome);
  if (ok) return ok.result as T;
  const reply = replyOf(outcome) as { ok?: unknown } | undefined;
  if (reply?.ok === false) throw fromWire(socket, reply);
  throw noAnswer(socket, `answered HTTP ${outcome.status} without its JSON envelope`);
}
