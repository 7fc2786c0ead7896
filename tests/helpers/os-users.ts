/**
 * Real OS users for deployment tests: a daemon user, agent users and their group, created
 * with useradd/groupadd as root (CI runs as root) and removed at teardown. A test that needs
 * them calls `requireRoot(t)` first: under CI a missing capability fails the run instead of
 * shrinking it; elsewhere the test is skipped with its reason.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { dirname } from 'node:path';

export interface OsUser {
  name: string;
  uid: number;
  gid: number;
}

interface T {
  teardown(fn: () => void | Promise<void>): void;
  fail(msg: string): void;
  plan(n: number, comment?: string): void;
}

/** Whether this process can create users (root with useradd on PATH). */
export function canCreateUsers(): string | undefined {
  if (process.getuid?.() !== 0) return 'creating OS users needs root';
  try {
    execFileSync('useradd', ['--help'], { stdio: 'ignore' });
  } catch {
    return 'useradd is not installed';
  }
  // the users created run the checkout's built binary: every directory above it must let them search it
  for (let d = process.cwd(); ; d = dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0)
      return `other users cannot reach this checkout (${d} has no search bit for others; .ci/run opens it for the run)`;
    if (dirname(d) === d) break;
  }
  return undefined;
}

/** False (with the test skipped, or failed under CI) when users cannot be created here. */
export function requireRoot(t: T): boolean {
  const why = canCreateUsers();
  if (why === undefined) return true;
  if (process.env['CI']) t.fail(`${why} (CI needs it)`);
  // a plan of 0 with a reason is tap's way of saying the whole test was skipped, and why
  else t.plan(0, why);
  return false;
}

const id = (flag: string, name: string): number =>
  Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());

/** A unique name: `<prefix><6 hex>` (useradd takes at most 32 characters). */
export function uniqueName(prefix: string): string {
  return `${prefix}${randomBytes(3).toString('hex')}`;
}

/** A new group, removed at teardown. */
export function createGroup(t: T, prefix: string): { name: string; gid: number } {
  const name = uniqueName(prefix);
  execFileSync('groupadd', ['--system', name]);
  t.teardown(() => {
    try {
      execFileSync('groupdel', [name], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  });
  return { name, gid: Number(execFileSync('getent', ['group', name], { encoding: 'utf8' }).split(':')[2]) };
}

/**
 * A new system user with no login shell and no home, in `groups` besides its own group;
 * removed at teardown (after the test's other teardowns registered later have run).
 */
export function createUser(t: T, prefix: string, groups: readonly string[] = []): OsUser {
  const name = uniqueName(prefix);
  execFileSync('useradd', [
    '--system',
    '--user-group',
    '--no-create-home',
    '--shell',
    '/usr/sbin/nologin',
    ...(groups.length ? ['--groups', groups.join(',')] : []),
    name,
  ]);
  t.teardown(() => {
    try {
      execFileSync('userdel', [name], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  });
  return { name, uid: id('-u', name), gid: id('-g', name) };
}

/**
 * The argv prefix that runs a command as `user` with its groups (util-linux's setpriv:
 * node's own spawn `uid`/`gid` options drop every supplementary group, the agents group
 * included, which is not how a user's process runs). NODE_OPTIONS is dropped: the test
 * runner puts its own hooks there, which write into the checkout as the other user cannot.
 */
export function asUser(user: Pick<OsUser, 'name'>): string[] {
  return [
    'env',
    '-u',
    'NODE_OPTIONS',
    'setpriv',
    `--reuid=${user.name}`,
    `--regid=${user.name}`,
    '--init-groups',
    '--',
  ];
}
