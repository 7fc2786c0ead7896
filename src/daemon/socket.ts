/**
 * The daemon's unix socket: bound only in a directory nobody but the daemon's user and root
 * can write, created with its final mode before anyone can reach it, a stale one of its own
 * replaced, a live one (or another user's, or a file that is not a socket) never touched.
 *
 * The directory comes first: whoever can write the socket's directory (or a non-sticky
 * directory above it) can rename the socket away and bind an impostor that every client then
 * trusts with its token and arguments. So before anything is created the path is checked
 * with `looseAncestors` (sshd's StrictModes rule), and a loose directory refuses the start
 * with DAEMON_SOCKET_DIR_UNSAFE.
 *
 * The socket is bound inside a fresh directory only this user can enter (mkdtemp makes it
 * 0700), chmod-ed to the configured mode there, then hard-linked to its path: `link` fails
 * when the path exists, so two daemons starting together cannot both take it, and there is
 * never a moment when the socket is reachable with a wider mode. The process umask is not
 * touched (it is process-wide, and async file operations on the thread pool would see it).
 */
import type { Stats } from 'node:fs';
import { chmod, link, lstat, mkdtemp, rm, stat, unlink } from 'node:fs/promises';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { looseAncestors, octal } from '../config/path-trust.js';
import { type BrokerError, brokerError, isBrokerError } from '../errors.js';

/** A bound socket; `close()` stops the server and removes the socket file if it is still ours. */
export interface BoundSocket {
  path: string;
  close(): Promise<void>;
}

/** Whether something accepts connections on `path` (false: nothing listens, a stale socket). */
function probe(path: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    s.setTimeout(2000);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    // a listener too busy to accept within the timeout is still a listener
    s.once('timeout', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNREFUSED' ? resolve(false) : reject(e)));
  });
}

const inUse = (path: string, why: string): BrokerError =>
  brokerError('DAEMON_SOCKET_IN_USE', { path, why }, { details: { socket: path } });

const errnoOf = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? 'error';

/**
 * The configured socket path cannot be used as it stands (its directory is missing, or the
 * daemon's user cannot create a file in it): CONFIG_INVALID naming `daemon.socket`, whose
 * problem says what was found, never a bare errno in an INTERNAL_ERROR.
 */
function unusable(path: string, message: string): BrokerError {
  const problems = [{ path: 'daemon.socket', code: 'CONFIG_FIELD_INVALID', message }];
  return brokerError(
    'CONFIG_INVALID',
    { what: `the daemon's socket ${path}`, problems, shown: 1 },
    { details: { socket: path, problems } },
  );
}

/**
 * Refuse to serve at `path` unless its directory, and every directory above it, lets only
 * root and `uid` (the daemon's user) replace what it holds: owned by one of them, not
 * writable by group or other, except that a directory above the socket's own may be
 * writable when it is sticky (`/tmp`). Nothing is created.
 * @param uid the daemon's user; default this process's (no check where the platform has no uids)
 * @throws BrokerError DAEMON_SOCKET_DIR_UNSAFE (a loose directory, or one that cannot be
 *   examined), CONFIG_INVALID (not absolute, or the directory is missing or not a directory)
 */
export async function checkSocketDir(path: string, uid = process.getuid?.()): Promise<void> {
  if (!isAbsolute(path)) throw unusable(path, 'must be an absolute path');
  const dir = dirname(path);
  let st: Stats;
  try {
    st = await stat(dir);
  } catch (e) {
    const code = errnoOf(e);
    if (code === 'ENOENT' || code === 'ENOTDIR')
      throw unusable(
        path,
        `its directory ${dir} does not exist (${code}); create it owned by the daemon's user, group agents, mode 2750`,
      );
    throw unsafe(path, [{ directory: dir, uid: -1, mode: 0, why: `cannot be examined (${code})` }]);
  }
  if (!st.isDirectory()) throw unusable(path, `${dir} is not a directory`);
  if (uid === undefined) return;
  const loose = await looseAncestors(path, uid);
  if (loose.length > 0) throw unsafe(path, loose);
}

function unsafe(
  socket: string,
  loose: readonly { directory: string; uid: number; mode: number; why: string }[],
): BrokerError {
  const first = loose[0]!;
  return brokerError(
    'DAEMON_SOCKET_DIR_UNSAFE',
    { socket, directory: first.directory, why: first.why, side: 'daemon' },
    {
      details: {
        socket,
        directory: first.directory,
        why: first.why,
        side: 'daemon',
        directories: loose.map((l) => ({
          directory: l.directory,
          why: l.why,
          ...(l.uid >= 0 ? { uid: l.uid, mode: octal(l.mode) } : {}),
        })),
      },
    },
  );
}

/** Remove a stale socket at `path`; refuse a live one or anything that is not a socket. */
async function clearStale(path: string): Promise<void> {
  let st: Awaited<ReturnType<typeof lstat>>;
  try {
    st = await lstat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw unusable(path, `cannot be examined (${errnoOf(e)})`);
  }
  if (!st.isSocket()) throw inUse(path, 'exists and is not a socket (it is never replaced)');
  // another user's socket is theirs, whether anything listens on it or not
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid)
    throw inUse(path, `is a socket owned by uid ${st.uid} (another user's socket is never replaced)`);
  let live: boolean;
  try {
    live = await probe(path);
  } catch (e) {
    throw inUse(path, `is a socket that cannot be probed (${errnoOf(e)}); it is left alone`);
  }
  if (live) throw inUse(path, 'has a process listening on it');
  await unlink(path).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'ENOENT') throw inUse(path, `is a stale socket that cannot be removed (${errnoOf(e)})`);
  });
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    server.once('error', onError);
    server.listen(path, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
  });
}

/**
 * Bind `server` to the unix socket `path` with `mode`. The directory is checked first
 * (`checkSocketDir`); nothing is created in a directory that fails it.
 * @throws BrokerError DAEMON_SOCKET_DIR_UNSAFE (another user could replace the socket),
 *   DAEMON_SOCKET_IN_USE (a live socket, another user's socket, or a file that is not a socket
 *   at the path), CONFIG_INVALID (the path cannot be used: its directory is missing or the
 *   daemon's user cannot create the socket in it; `details.problems` says why)
 */
export async function bindSocket(server: Server, path: string, mode: number): Promise<BoundSocket> {
  await checkSocketDir(path);
  await clearStale(path);
  const dir = await mkdtemp(join(dirname(path), `.${basename(path)}.`)).catch((e: unknown) => {
    throw unusable(
      path,
      `cannot create the socket in ${dirname(path)} (${errnoOf(e)}); the daemon's user must be able to write its directory`,
    );
  });
  const tmp = join(dir, 's');
  try {
    await listen(server, tmp);
    await chmod(tmp, mode);
    await link(tmp, path).catch((e: NodeJS.ErrnoException) => {
      throw e.code === 'EEXIST' ? inUse(path, 'was taken by another process while this daemon started') : e;
    });
  } catch (e) {
    await closeServer(server);
    await rm(dir, { recursive: true, force: true });
    // a unix socket's path is at most 107 bytes, and the temporary name is longer than the path
    throw isBrokerError(e)
      ? e
      : unusable(
          path,
          `cannot create the socket beside its path (${errnoOf(e)}); is the path short enough (a unix socket's path is at most 107 bytes, and the daemon binds first at a name about 10 bytes longer)?`,
        );
  }
  // the socket now has one name, its path; the temporary name and directory go
  await rm(dir, { recursive: true, force: true });
  const { ino, dev } = await lstat(path);
  return {
    path,
    async close() {
      // the name goes first, so no new client reaches a daemon that is stopping; only our
      // own socket is removed (a file someone put there since is theirs)
      const now = await lstat(path).catch(() => undefined);
      if (now && now.ino === ino && now.dev === dev) await unlink(path).catch(() => undefined);
      await closeServer(server);
    },
  };
}
