/**
 * The per-call directory: `<tmp>/clibroker-sbx-XXXX/` holding `home/`, `tmp/` (the child's
 * HOME and TMPDIR), `ca.pem` (the session CA) and `run/` (isolated profile: launcher, relay
 * socket, exit status). One rm of the root removes all of it.
 */
import { access, constants, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';
import { BrokerError } from '../errors.js';

export interface CallDirs {
  root: string;
  home: string;
  tmp: string;
  run: string;
  /** the CA file's own directory (SSL_CERT_DIR), nothing else in it */
  certs: string;
  caFile: string;
}

/** Creates the call's directories (0700: only this user, which is the child's too). */
export async function makeCallDirs(caCertPem: string): Promise<CallDirs> {
  const root = await mkdtemp(join(tmpdir(), 'clibroker-sbx-'));
  const dirs = {
    root,
    home: join(root, 'home'),
    tmp: join(root, 'tmp'),
    run: join(root, 'run'),
    certs: join(root, 'certs'),
    caFile: join(root, 'certs', 'ca.pem'),
  };
  try {
    await Promise.all([
      mkdir(dirs.home, { mode: 0o700 }),
      mkdir(dirs.tmp, { mode: 0o700 }),
      mkdir(dirs.run, { mode: 0o700 }),
      mkdir(dirs.certs, { mode: 0o700 }),
    ]);
    await writeFile(dirs.caFile, caCertPem, { mode: 0o600 });
  } catch (e) {
    await removeCallDirs(dirs);
    throw e;
  }
  return dirs;
}

/** Removes everything the call created; retried because a dying child may still be writing. */
export async function removeCallDirs(dirs: Pick<CallDirs, 'root'>): Promise<void> {
  await rm(dirs.root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
}

/**
 * The absolute path of the program, looked up on the child's PATH (not ours) for a bare name.
 * @throws BrokerError CLI_SPAWN_FAILED when it is missing, not executable or a relative path
 */
export async function resolveEntrypoint(entrypoint: string, path: string | undefined): Promise<string> {
  const fail = (reason: string): never => {
    throw new BrokerError('CLI_SPAWN_FAILED', { details: { entrypoint, reason } });
  };
  if (entrypoint === '' || entrypoint.includes('\0')) fail('empty or invalid name');
  if (entrypoint.includes('/')) {
    if (!isAbsolute(entrypoint)) fail('a path entrypoint must be absolute');
    if (!(await executable(entrypoint))) fail('missing or not executable');
    return entrypoint;
  }
  for (const dir of (path ?? '').split(delimiter)) {
    if (!isAbsolute(dir)) continue; // an empty or relative PATH entry would search the cwd
    const candidate = join(dir, entrypoint);
    if (await executable(candidate)) return candidate;
  }
  return fail("not found on the child's PATH");
}

async function executable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}
