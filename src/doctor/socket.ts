/**
 * The daemon socket's directory: whoever can write it, or a directory above it, can put an
 * impostor where agents connect (DEPLOY_SOCKET_DIR_UNSAFE; the daemon refuses to start there,
 * DAEMON_SOCKET_DIR_UNSAFE, and the client refuses to connect).
 */
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { looseAncestors } from '../config/path-trust.js';
import type { DaemonUser, DoctorProblem, NotChecked } from './types.js';

export async function checkSocketDir(
  socket: string,
  daemon: DaemonUser,
): Promise<{ problems: DoctorProblem[]; notChecked: NotChecked[] }> {
  const dir = dirname(socket);
  const notChecked: NotChecked[] = [];
  let target = socket;
  const exists = await stat(dir).then(
    () => true,
    () => false,
  );
  if (!exists) {
    // systemd's RuntimeDirectory creates it when the service starts: its parents are checked now
    notChecked.push({
      what: dir,
      why: `the socket's directory does not exist (yet): run doctor again while the daemon runs`,
    });
    target = dir;
  }
  const problems: DoctorProblem[] = [];
  for (const l of await looseAncestors(target, daemon.uid)) {
    if (l.uid === -1 && l.why.includes('ENOENT')) continue;
    problems.push({
      code: 'DEPLOY_SOCKET_DIR_UNSAFE',
      path: l.directory,
      message: `it ${l.why}: another user could put an impostor socket where agents connect (the daemon refuses to start there); make the socket's directory ${daemon.name}'s, group agents, mode 2750, under directories only root can write`,
    });
  }
  return { problems, notChecked };
}
