/**
 * Who can change what a path names. A file is only as safe as the directories above it:
 * whoever can write a directory can rename an entry in it and put another in its place (a
 * socket, a secret file, a configuration). The rule is sshd's StrictModes: every directory
 * from the path's own up to `/` must be owned by root or the trusted user and not writable by
 * group or other, except that a directory *above* the path's own may be writable when it is
 * sticky (`/tmp`), since the sticky bit lets nobody else rename what they do not own.
 *
 * Used by the daemon before it listens (its socket's directory), by the thin client before
 * it connects, and by `clibroker doctor` for every file of a deployment.
 */
import type { Stats } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

/** One directory that lets someone other than root and the trusted user replace what it holds. */
export interface LooseDirectory {
  directory: string;
  /** the directory's owner and mode, as found */
  uid: number;
  mode: number;
  /** in words: "is owned by uid 1001", "has mode 0777 (group or other may write it)", "cannot be examined (EACCES)" */
  why: string;
}

const errno = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? 'error';

/** `0750`-style text of a mode's permission and special bits. */
export function octal(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, '0');
}

/**
 * Why `dir` lets someone other than root and `uid` replace what it holds; undefined when it
 * does not. `own`: the directory holding the file itself (no sticky exception: a sticky
 * directory still lets others add names beside the file, and a socket's directory that
 * others can write lets them squat its name).
 */
export function looseDirectory(
  dir: string,
  st: Stats,
  uid: number,
  own: boolean,
): LooseDirectory | undefined {
  const base = { directory: dir, uid: st.uid, mode: st.mode & 0o7777 };
  if (st.uid !== 0 && st.uid !== uid) return { ...base, why: `is owned by uid ${st.uid}` };
  if ((st.mode & 0o022) !== 0 && (own || (st.mode & 0o1000) === 0))
    return { ...base, why: `has mode ${octal(st.mode)} (group or other may write it)` };
  return undefined;
}

/**
 * Every directory from `path`'s own up to `/` that lets a user other than root and `uid`
 * replace what it holds (or that cannot be examined). Empty when the path's name is safe.
 * Where a directory on the way is a symbolic link, the directories of its target are walked
 * too: whoever can write either chain can change what the name reaches.
 * @param path an absolute path; it need not exist itself, its directory must
 * @param uid the trusted user besides root (the daemon's)
 */
export async function looseAncestors(path: string, uid: number): Promise<LooseDirectory[]> {
  const out = await walk(dirname(path), uid);
  const real = await realpath(dirname(path)).catch(() => undefined);
  if (real && real !== dirname(path))
    for (const l of await walk(real, uid)) if (!out.some((o) => o.directory === l.directory)) out.push(l);
  return out;
}

async function walk(from: string, uid: number): Promise<LooseDirectory[]> {
  const out: LooseDirectory[] = [];
  let dir = from;
  let own = true;
  for (;;) {
    let st: Stats;
    try {
      st = await stat(dir);
    } catch (e) {
      out.push({ directory: dir, uid: -1, mode: 0, why: `cannot be examined (${errno(e)})` });
      return out;
    }
    const loose = looseDirectory(dir, st, uid, own);
    if (loose) out.push(loose);
    const up = dirname(dir);
    if (up === dir) return out;
    dir = up;
    own = false;
  }
}
