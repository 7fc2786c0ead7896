/**
 * What the isolated profile shows a CLI of the host's file system: an allowlist, never a
 * denylist. A file the daemon's user can read is not thereby the CLI's, because the agent
 * chooses the CLI's arguments (`curl file://…`, `-d @file`, `gh api --input file`); so the
 * child sees the system directories programs and shared libraries live in, the few files of
 * `/etc` that a CLI reads to start and to connect, and what the operator's image adds
 * (`readOnlyPaths`) — nothing else of `/etc`, `/var`, `/run`, `/home`, `/root`, `/srv`,
 * `/opt`, `/mnt` or the host's `/tmp`.
 *
 * docs/sandbox.md lists the entries and why each is there.
 */
import { realpathSync } from 'node:fs';
import { within } from './hidden.js';

/** The host's top-level program and library directories, bound read-only (symlinks kept: merged /usr). */
export const SYSTEM_DIRS: readonly string[] = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
];

/**
 * The entries of `/etc` a CLI may read, each bound read-only where it exists (a missing one is
 * skipped; one that is a symlink is shown as that symlink only when its target lies in the
 * system directories). What gh, az and curl opened under /etc, traced while they made
 * requests through the broker (docs/sandbox.md); none holds a secret on a standard system.
 * Everything else of `/etc` is absent inside: the system's CA bundles too (az opens one, but
 * the child trusts only the session CA its env points at), and /etc/alternatives, which none
 * of them reads (an image whose program is reached through it adds it to `readOnlyPaths`).
 */
export const ETC_ALLOWED: readonly string[] = [
  // the dynamic loader's index of library directories (those ld.so.conf.d adds are found only through it)
  '/etc/ld.so.cache',
  // the user's name and home directory: getpwuid (curl looks for a .curlrc there; Python's getpass asks)
  '/etc/nsswitch.conf',
  '/etc/passwd',
  // the time zone: a symlink into /usr/share/zoneinfo, kept as one (gh reads the link, curl and az the zone)
  '/etc/localtime',
];

/** Whether `path` (absolute, normalised) lies in a system directory: visible inside at the same path. */
export function inSystemDirs(path: string): boolean {
  return SYSTEM_DIRS.some((dir) => within(path, dir));
}

/** `path`'s real path where it exists, else `path` (a missing entry shows nothing new). */
function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Whether the isolated profile shows `path` (an absolute, normalised host path) to a CLI whose
 * image adds `readOnlyPaths`. The call's own directory, the pinned entrypoint and the
 * launcher's tree are shown too, but they are the call's or the operator's program, never a
 * place for a secret. `clibroker doctor` asks this of every configuration, secret and store
 * path of a deployment (as written and as its real path). A bind shows its source's *target*
 * at the entry's name, so an entry that is a symlink (`/opt/tool` → `/srv/deploy`) counts as
 * its real path too: what lies under `/srv/deploy` is shown.
 */
export function visibleInSandbox(path: string, readOnlyPaths: readonly string[] = []): boolean {
  for (const dir of [...SYSTEM_DIRS, ...ETC_ALLOWED, ...readOnlyPaths])
    if (within(path, dir) || within(path, real(dir))) return true;
  return false;
}
