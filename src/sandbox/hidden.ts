/**
 * Hidden paths in the isolated profile: where, inside the sandbox, a host path would be
 * visible, and the bwrap mounts that cover it there. A directory gets an empty tmpfs, any
 * other file (a regular file, a socket, a FIFO) /dev/null, so the child reads nothing and a
 * unix socket has no listener behind it.
 *
 * Worked out from the binds rather than from the path as written, because bwrap mounts
 * each bind's *target* at its destination: a symlink in the hidden path (or in a bind's
 * source) would otherwise be masked at a name the child never reaches, and bwrap refuses to
 * mount over an absolute symlink inside the new root at all.
 */
import { lstatSync, realpathSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Whether `path` is `dir` or below it (both absolute and free of `..`). */
export function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}

interface Resolved {
  /** the host file's real path */
  real: string;
  isDir: boolean;
}

function resolve(path: string): Resolved | undefined {
  try {
    lstatSync(path);
    const real = realpathSync(path);
    return { real, isDir: statSync(real).isDirectory() };
  } catch {
    // missing, or a symlink to nothing: there is nothing to hide
    return undefined;
  }
}

function mask(path: string, isDir: boolean): string[] {
  return isDir ? ['--tmpfs', path] : ['--ro-bind', '/dev/null', path];
}

export interface HiddenMasks {
  /** masks over an ancestor of the call's directory: they go before its bind, which then shows only it */
  beforeCall: string[];
  /** every other mask: after all binds, so each wins over what a bind showed */
  after: string[];
}

/**
 * The mounts that hide `hidden` inside a sandbox whose host binds are `shown` (each bound
 * at its own path; symlinked sources allowed) and whose call directory is `callRoot`.
 * Checked against the host as it is now: a path that appears later is not covered, so a
 * directory where files come and go (a SQLite store's -wal file) is hidden as a directory.
 * A hidden path at or inside the call's directory is ignored: that directory is created
 * fresh for the call and holds only the call's own files.
 */
export function hiddenMasks(
  hidden: readonly string[],
  shown: readonly string[],
  callRoot: string,
): HiddenMasks {
  const binds: { dest: string; real: string; isDir: boolean }[] = [];
  for (const dest of shown) {
    const r = resolve(dest);
    if (r) binds.push({ dest, ...r });
  }
  const at = new Map<string, boolean>();
  for (const h of hidden) {
    const target = resolve(h);
    if (!target) continue;
    for (const b of binds) {
      // The bind shows the hidden file: mask it where it appears inside.
      if (within(target.real, b.real)) at.set(join(b.dest, relative(b.real, target.real)), target.isDir);
      // The bind shows something inside a hidden directory: mask all of the bind.
      else if (target.isDir && within(b.real, target.real)) at.set(b.dest, b.isDir);
    }
  }
  const out: HiddenMasks = { beforeCall: [], after: [] };
  for (const [path, isDir] of at) {
    if (within(path, callRoot)) continue;
    if (within(callRoot, path)) out.beforeCall.push(...mask(path, isDir));
    else out.after.push(...mask(path, isDir));
  }
  return out;
}
