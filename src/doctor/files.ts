/**
 * Owners and modes: every file of the deployment must be readable and writable by the
 * daemon's user and root only (DEPLOY_FILE_EXPOSED), every directory above it must let
 * nobody else replace what it holds (DEPLOY_DIR_EXPOSED, sshd's StrictModes rule), and a
 * directory holding secrets or the store must not let others list or enter it. Every regular
 * file beside a secret is checked as a secret: a rotated copy (`token.next`) or an editor's
 * backup (`token~`) holds one too, and the sandbox masks only the files the configuration names.
 */
import { lstat, readdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { looseAncestors } from '../config/path-trust.js';
import { refName } from '../config/secrets.js';
import { accessAs, caExposure, dirOpenness, fileExposure } from './access.js';
import type { Deployment } from './deployment.js';
import type { DaemonUser, DoctorProblem } from './types.js';

const errno = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? 'error';

/** A file path as a message may show it: a secret's path that looks like a secret is not shown. */
export const shown = (file: string): string => {
  const n = refName({ file });
  return 'file' in n ? n.file : file;
};

export interface FileChecks {
  problems: DoctorProblem[];
  /** the regular files found beside secrets, checked as secrets */
  beside: string[];
}

/** Every file check of the deployment, for the daemon's user. */
export async function checkFiles(
  d: Deployment,
  daemon: DaemonUser,
  passwd: string,
  asRoot: boolean,
): Promise<FileChecks> {
  const problems: DoctorProblem[] = [];
  const seenDirs = new Set<string>();
  const add = (code: string, path: string, message: string) => problems.push({ code, path, message });

  const ancestors = async (file: string, what: string) => {
    for (const l of await looseAncestors(file, daemon.uid)) {
      // a missing directory is the loader's problem, or created at start
      if (seenDirs.has(l.directory) || (l.uid === -1 && l.why.includes('ENOENT'))) continue;
      seenDirs.add(l.directory);
      add('DEPLOY_DIR_EXPOSED', l.directory, `it ${l.why}: another user could replace ${what} in it`);
    }
  };
  const file = async (path: string, what: string, opts: { required: boolean }) => {
    let st: Awaited<ReturnType<typeof stat>>;
    try {
      st = await stat(path);
    } catch (e) {
      // a missing file is the loader's problem (or, for the store, not created yet)
      if (opts.required && errno(e) !== 'ENOENT')
        add('DEPLOY_FILE_EXPOSED', shown(path), `${what} cannot be examined (${errno(e)})`);
      return;
    }
    const why = fileExposure(st, daemon, passwd);
    if (why)
      add(
        'DEPLOY_FILE_EXPOSED',
        shown(path),
        `${what} ${why}; make it ${daemon.name}'s (or root's), mode 0600`,
      );
  };

  // the configuration
  await file(d.config, 'the configuration', { required: true });
  await ancestors(d.config, 'the configuration');
  if (asRoot) {
    const why = await accessAs(d.config, daemon, 4);
    if (why) add('CONFIG_FIELD_INVALID', '(root)', `the daemon could not read its configuration: ${why}`);
  }

  // the secrets, their directories and what lies beside them
  const secretFiles = d.secrets.flatMap((s) => ('file' in s ? [{ at: s.at, file: s.file }] : []));
  const named = new Set<string>([
    d.config,
    ...secretFiles.map((s) => s.file),
    ...d.manifests.map((m) => m.file),
  ]);
  if (d.store)
    for (const p of [d.store, `${d.store}-wal`, `${d.store}-shm`, `${d.store}-journal`]) named.add(p);
  for (const s of secretFiles) {
    await file(s.file, `the secret of ${s.at}`, { required: true });
    await ancestors(s.file, `the secret of ${s.at}`);
    if (asRoot) {
      const why = await accessAs(s.file, daemon, 4);
      if (why)
        add(
          'CONFIG_SECRET_MISSING',
          s.at,
          `the daemon could not read the secret file: ${why.replace(s.file, shown(s.file))}`,
        );
    }
  }
  const beside: string[] = [];
  const secretDirs = [...new Set(secretFiles.map((s) => dirname(s.file)))];
  for (const dir of secretDirs) {
    const st = await stat(dir).catch(() => undefined);
    if (!st) continue;
    const open = dirOpenness(st, daemon, passwd);
    if (open)
      add(
        'DEPLOY_DIR_EXPOSED',
        dir,
        `it holds secrets and ${open}: others learn their names and can open any file left readable; chmod 0700`,
      );
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const n of names) {
      const p = join(dir, n);
      if (named.has(p)) continue;
      const l = await lstat(p).catch(() => undefined);
      if (!l?.isFile()) continue;
      beside.push(p);
      const why = fileExposure(l, daemon, passwd);
      if (why)
        add(
          'DEPLOY_FILE_EXPOSED',
          shown(p),
          `a file beside a secret ${why}: a rotated copy or a backup holds a secret too, and the sandbox masks only the files the configuration names; remove it or chmod 0600`,
        );
    }
  }

  // the manifests
  for (const m of d.manifests) {
    await file(m.file, `the manifest of ${m.at}`, { required: true });
    await ancestors(m.file, `the manifest of ${m.at}`);
    if (asRoot) {
      const why = await accessAs(m.file, daemon, 4);
      if (why) add('CONFIG_MANIFEST_UNREADABLE', m.at, `the daemon could not read the manifest: ${why}`);
    }
  }

  // the upstream CA file: not secret, but whoever can change it can add a CA the broker trusts
  // for vendor TLS, and read every credential it stamps
  if (d.caFile) {
    const st = await stat(d.caFile).catch(() => undefined);
    const why = st ? caExposure(st, daemon, passwd) : undefined;
    if (why)
      add(
        'DEPLOY_FILE_EXPOSED',
        d.caFile,
        `the upstream CA file ${why}: another user could add a CA the broker then trusts for vendor traffic; make it root's or ${daemon.name}'s, mode 0644 or tighter`,
      );
    await ancestors(d.caFile, 'the upstream CA file');
  }

  // the store, its side files and its directory
  if (d.store) {
    for (const p of [d.store, `${d.store}-wal`, `${d.store}-shm`])
      await file(p, 'the store file', { required: false });
    const dir = dirname(d.store);
    const st = await stat(dir).catch(() => undefined);
    if (st) {
      await ancestors(d.store, 'the store');
      const ownerWhy =
        st.uid !== 0 && st.uid !== daemon.uid
          ? `is owned by uid ${st.uid}, not root or ${daemon.name}`
          : undefined;
      const open = ownerWhy ?? dirOpenness(st, daemon, passwd);
      if (open)
        add(
          'DEPLOY_DIR_EXPOSED',
          dir,
          `it holds the store and ${open}: SQLite creates the -wal and -shm files there with the daemon's umask; chmod 0700`,
        );
      if (asRoot) {
        const why = await accessAs(dir, daemon, 3);
        if (why) add('CONFIG_FIELD_INVALID', 'store', `the daemon could not create its store files: ${why}`);
      }
    } else {
      // created by the daemon at start (mode 0700): its parents still decide who can replace it
      await ancestors(dir, "the store's directory");
    }
  }
  return { problems, beside };
}
