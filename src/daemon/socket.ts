/**
 * The daemon's unix socket: created with its final mode before anyone can reach it, a
 * stale one replaced, a live one (or a file that is not a socket) never touched.
 *
 * The socket is bound inside a fresh directory only this user can enter (mkdtemp makes it
 * 0700), chmod-ed to the configured mode there, then hard-linked to its path: `link` fails
 * when the path exists, so two daemons starting together cannot both take it, and there is
 * never a moment when the socket is reachable with a wider mode. The process umask is not
 * touched (it is process-wide, and async file operations on the thread pool would see it).
 */
import { chmod, link, lstat, mkdtemp, rm, unlink } from 'node:fs/promises';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { type BrokerError, brokerError } from '../errors.js';

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

/** Remove a stale socket at `path`; refuse a live one or anything that is not a socket. */
async function clearStale(path: string): Promise<void> {
  let st: Awaited<ReturnType<typeof lstat>>;
  try {
    st = await lstat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  if (!st.isSocket()) throw inUse(path, 'exists and is not a socket (it is never replaced)');
  if (await probe(path)) throw inUse(path, 'has a process listening on it');
  await unlink(path).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'ENOENT') throw e;
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
 * Bind `server` to the unix socket `path` with `mode`.
 * @throws BrokerError DAEMON_SOCKET_IN_USE; a node error when the directory is missing or not writable
 */
export async function bindSocket(server: Server, path: string, mode: number): Promise<BoundSocket> {
  if (!isAbsolute(path))
    throw new Error(`daemon socket must be an absolute path, got ${JSON.stringify(path)}`);
  await clearStale(path);
  const dir = await mkdtemp(join(dirname(path), `.${basename(path)}.`));
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
    throw e;
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
