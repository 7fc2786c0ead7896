/**
 * Who can reach a file, from its owner and mode bits (ACLs are not read): what an attacker with
 * a shell as an agent user could do with it, and whether the daemon's user can use it.
 */
import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { octal } from '../config/path-trust.js';
import { groupTrusted } from './users.js';
import type { DaemonUser } from './types.js';

/** Why users other than root and the daemon's can read or change a file; undefined when none can. */
export function fileExposure(st: Stats, daemon: DaemonUser, passwd: string): string | undefined {
  if (st.uid !== 0 && st.uid !== daemon.uid)
    return `is owned by uid ${st.uid}, not root or ${daemon.name}: its owner can read and change it`;
  const mode = st.mode & 0o777;
  if ((mode & 0o006) !== 0) return `has mode ${octal(mode)}: every user may ${rw(mode & 0o007)} it`;
  if ((mode & 0o060) !== 0 && !groupTrusted(st.gid, daemon, passwd))
    return `has mode ${octal(mode)}: group ${st.gid}, which has members besides root and ${daemon.name}, may ${rw((mode >> 3) & 0o7)} it`;
  return undefined;
}

/** Why users other than root and the daemon's can change a file anyone may read (a CA bundle); undefined when none can. */
export function caExposure(st: Stats, daemon: DaemonUser, passwd: string): string | undefined {
  if (st.uid !== 0 && st.uid !== daemon.uid) return `is owned by uid ${st.uid}, not root or ${daemon.name}`;
  const mode = st.mode & 0o777;
  if ((mode & 0o002) !== 0) return `has mode ${octal(mode)}: every user may write it`;
  if ((mode & 0o020) !== 0 && !groupTrusted(st.gid, daemon, passwd))
    return `has mode ${octal(mode)}: group ${st.gid}, which has members besides root and ${daemon.name}, may write it`;
  return undefined;
}

/**
 * Why users other than root and the daemon's can list or enter a directory (read or search
 * bits for other, or for a group with other members); undefined when none can.
 */
export function dirOpenness(st: Stats, daemon: DaemonUser, passwd: string): string | undefined {
  const mode = st.mode & 0o777;
  if ((mode & 0o005) !== 0) return `has mode ${octal(st.mode)}: every user may ${lx(mode & 0o7)} it`;
  if ((mode & 0o050) !== 0 && !groupTrusted(st.gid, daemon, passwd))
    return `has mode ${octal(st.mode)}: group ${st.gid}, which has members besides root and ${daemon.name}, may ${lx((mode >> 3) & 0o7)} it`;
  return undefined;
}

const rw = (bits: number): string =>
  (bits & 4) !== 0 && (bits & 2) !== 0 ? 'read and write' : (bits & 4) !== 0 ? 'read' : 'write';
const lx = (bits: number): string =>
  (bits & 4) !== 0 ? 'list' : 'enter (and open a file in it by its name)';

function allows(st: Stats, user: DaemonUser, want: number): boolean {
  if (user.uid === 0) return true;
  const bits =
    st.uid === user.uid ? (st.mode >> 6) & 7 : user.gids.includes(st.gid) ? (st.mode >> 3) & 7 : st.mode & 7;
  return (bits & want) === want;
}

/**
 * Whether `user` may `want` (4 read, 2 write, 1 execute) the existing path, searching every
 * directory above it; undefined when it can, else why not.
 */
export async function accessAs(path: string, user: DaemonUser, want: number): Promise<string | undefined> {
  const chain: string[] = [];
  for (let d = dirname(path); ; d = dirname(d)) {
    chain.unshift(d);
    if (dirname(d) === d) break;
  }
  for (const d of chain) {
    const st = await stat(d).catch(() => undefined);
    if (st && !allows(st, user, 1)) return `${user.name} cannot enter ${d}`;
  }
  const st = await stat(path).catch(() => undefined);
  if (!st) return undefined; // missing: reported where it matters
  if (!allows(st, user, want))
    return `${user.name} cannot ${want & 2 ? 'write' : 'read'} ${path} (mode ${octal(st.mode)}, owner ${st.uid})`;
  return undefined;
}
