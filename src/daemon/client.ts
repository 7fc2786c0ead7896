/**
 * The thin client of the broker daemon, used by `clibroker run` and `clibroker resume`. It
 * imports only node built-ins, the error catalogue, the protocol's constants and the small
 * path-trust helper, so a command that talks to the daemon starts as fast as `--help`: no
 * zod, no broker, no store.
 *
 * Before it connects it checks the socket's directory (`socketDirProblem`): a socket in a
 * directory that this user, or anyone but root and the directory's owner, could write may
 * have been swapped for an impostor, and the token and arguments are not sent to it.
 */
import { realpath, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { looseAncestors, octal } from '../config/path-trust.js';
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

/** A directory on the socket's path that lets someone other than the daemon replace the socket. */
export interface SocketDirProblem {
  directory: string;
  why: string;
}

/**
 * Why the socket at `socket` could be an impostor, from the calling user's side; undefined
 * when its path is safe (or cannot be examined: then connecting fails and says so).
 *
 * The daemon's user is not known here, so the owner of the socket's directory stands for it,
 * and the path must pass the daemon's own rule for that owner (sshd's StrictModes: every
 * directory up to `/` owned by root or that owner and not writable by group or other, a
 * sticky directory above the socket's own excepted). On top, no directory on the path may
 * belong to the calling user, unless that user is root: a directory the caller owns is one
 * it can write, and a daemon that is a separate user never serves from it. Root owns `/` and
 * every system directory and can replace any socket anyway, so for root only the first rule
 * applies. Mode bits are read; ACLs are not.
 * @param uid the calling user (default the effective uid; no check where the platform has none)
 */
export async function socketDirProblem(
  socket: string,
  uid = process.geteuid?.(),
): Promise<SocketDirProblem | undefined> {
  if (uid === undefined) return undefined;
  let owner: number;
  try {
    owner = (await stat(dirname(socket))).uid;
  } catch {
    return undefined;
  }
  const loose = (await looseAncestors(socket, owner)).find((l) => l.uid !== -1);
  if (loose) return { directory: loose.directory, why: loose.why };
  if (uid === 0) return undefined;
  for (const directory of await directoriesOf(dirname(socket))) {
    const st = await stat(directory).catch(() => undefined);
    if (st?.uid === uid)
      return {
        directory,
        why: `is owned by this user (uid ${uid}, mode ${octal(st.mode)}), who could replace the socket`,
      };
  }
  return undefined;
}

/** `dir` and every directory above it, then those of its real path where it differs. */
async function directoriesOf(dir: string): Promise<string[]> {
  const up = (from: string): string[] => {
    const out = [from];
    for (let d = from; dirname(d) !== d; d = dirname(d)) out.push(dirname(d));
    return out;
  };
  const real = await realpath(dir).catch(() => dir);
  return real === dir ? up(dir) : [...up(dir), ...up(real)];
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
  return new Promise<T>((resolve, reject) => {
    let sent = false;
    const req = request({
      // A fresh connection per call, made here (with the idle timeout an agent would set):
      // `connect` then marks the moment the request can have gone out. No agent: an agent works
      // out a TLS server name for every request, and its first IPv6 check compiles a large
      // regular expression, ~4 ms that `clibroker run` paid on every call (bench/agent-paths.ts).
      createConnection: () =>
        connect({ path: addr.socket, ...(addr.timeoutMs ? { timeout: addr.timeoutMs } : {}) }),
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
