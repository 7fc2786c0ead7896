/**
 * The daemon's user: who doctor checks the deployment for. Run as a user other than root,
 * that user; run as root, the user `--user` names, else the configuration file's owner.
 * Users and groups are read with getent and id, so NSS sources (LDAP, sssd) count too.
 */
import { execFileSync } from 'node:child_process';
import { stat } from 'node:fs/promises';
import type { DaemonUser, DoctorProblem } from './types.js';

/** The passwd entry of a name or uid, or undefined when there is none. */
export function lookupUser(nameOrUid: string | number): DaemonUser | undefined {
  let line: string;
  try {
    line = execFileSync('getent', ['passwd', String(nameOrUid)], { encoding: 'utf8' }).split('\n')[0] ?? '';
  } catch {
    return undefined;
  }
  const [name, , uid, gid] = line.split(':');
  if (!name || uid === undefined || gid === undefined) return undefined;
  let gids = [Number(gid)];
  try {
    gids = execFileSync('id', ['-G', name], { encoding: 'utf8' }).trim().split(/\s+/).map(Number);
  } catch {
    // no id(1): the primary group only
  }
  return { name, uid: Number(uid), gid: Number(gid), gids };
}

/**
 * The users a group lets in: its listed members and every user whose primary group it is
 * (from /etc/passwd only: NSS sources that cannot be enumerated are not seen).
 */
function groupMembers(gid: number, passwd: string): Set<string> {
  const out = new Set<string>();
  try {
    const entry = execFileSync('getent', ['group', String(gid)], { encoding: 'utf8' }).trim();
    for (const m of (entry.split(':')[3] ?? '').split(',')) if (m) out.add(m);
  } catch {
    // no such group: nobody is in it by name
  }
  for (const line of passwd.split('\n')) {
    const f = line.split(':');
    if (f[0] && Number(f[3]) === gid) out.add(f[0]);
  }
  return out;
}

/**
 * Whether every member of group `gid` is root or the daemon's user (its own group usually),
 * so group bits on a file give nobody else access.
 */
export function groupTrusted(gid: number, daemon: DaemonUser, passwd: string): boolean {
  for (const m of groupMembers(gid, passwd)) if (m !== 'root' && m !== daemon.name) return false;
  return true;
}

/** The daemon's user, or the problems that keep doctor from knowing it. */
export async function resolveDaemonUser(
  configFile: string,
  named: string | undefined,
): Promise<{ user?: DaemonUser; problems: DoctorProblem[] }> {
  const uid = process.getuid?.() ?? 0;
  const problem = (message: string): DoctorProblem => ({
    code: 'DEPLOY_DAEMON_USER',
    path: '(user)',
    message,
  });
  if (uid !== 0) {
    const me = lookupUser(uid) ?? { name: String(uid), uid, gid: process.getgid?.() ?? uid, gids: [] };
    if (me.gids.length === 0) me.gids = [me.gid];
    const problems: DoctorProblem[] = [];
    if (named !== undefined && named !== me.name && named !== String(uid))
      problems.push(
        problem(
          `--user ${named} is not this process's user (${me.name}): run doctor as root to check for another user; checked for ${me.name}`,
        ),
      );
    return { user: me, problems };
  }
  if (named !== undefined) {
    const u = lookupUser(named);
    if (!u) return { problems: [problem(`there is no user ${named}`)] };
    return { user: u, problems: [] };
  }
  let owner: number;
  try {
    owner = (await stat(configFile)).uid;
  } catch (e) {
    return {
      problems: [
        problem(
          `cannot tell the daemon's user: ${configFile} cannot be examined (${(e as NodeJS.ErrnoException).code ?? 'error'}); name it with --user`,
        ),
      ],
    };
  }
  if (owner === 0)
    return {
      problems: [
        problem(
          `cannot tell the daemon's user: ${configFile} is owned by root; name the user the daemon runs as with --user (it must not be root)`,
        ),
      ],
    };
  const u = lookupUser(owner);
  if (!u)
    return {
      problems: [problem(`${configFile} is owned by uid ${owner}, which is no user; name it with --user`)],
    };
  return { user: u, problems: [] };
}
