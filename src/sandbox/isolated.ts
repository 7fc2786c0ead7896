/**
 * The isolated profile: bubblewrap puts the child in its own network, PID, IPC
 * and UTS namespaces with no capabilities, read-only system directories, and the call's
 * directory as the only writable place. Its only way out is the broker: a relay here
 * accepts on a unix socket inside the call's run/ directory and connects to the broker's
 * port; the launcher (launcher.ts, run by the host's perl, or by node where perl does not
 * run) bridges 127.0.0.1:<that port> inside onto that socket.
 */
import { spawn } from 'node:child_process';
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { ETC_ALLOWED, inSystemDirs, SYSTEM_DIRS } from './allowlist.js';
import type { CallDirs } from './dirs.js';
import { hiddenMasks } from './hidden.js';
import type { LauncherKind } from './launcher.js';

/** Where Debian's bubblewrap package installs it. */
export const BWRAP = '/usr/bin/bwrap';

/** The perl that runs the fast launcher inside (Debian's perl-base, an Essential package). */
export const PERL = '/usr/bin/perl';

/** Whether a host path is inside the system directories every sandbox binds (bwrapArgs). */
export { inSystemDirs };

interface Binds {
  argv: string[];
  /** the host paths bound at their own path, where a hidden path could show (hidden.ts) */
  bound: string[];
}

/** The host's top-level system directories, read-only; a symlink (merged /usr) stays a symlink. */
function systemBinds(): Binds {
  const out: Binds = { argv: [], bound: [] };
  for (const p of SYSTEM_DIRS) {
    try {
      const st = lstatSync(p);
      if (st.isSymbolicLink()) out.argv.push('--symlink', readlinkSync(p), p);
      else if (st.isDirectory()) {
        out.argv.push('--ro-bind', p, p);
        out.bound.push(p);
      }
    } catch {
      // not on this system (/lib32, /libx32 usually)
    }
  }
  return out;
}

/**
 * The allowed entries of /etc, read-only. A symlink is recreated as the same symlink when its
 * target lies in the system directories (/etc/localtime → /usr/share/zoneinfo/…: a program
 * that reads the link for the zone's name still finds it); one that leads anywhere else
 * (/etc/resolv.conf → /run/…) is left out, since binding it would show a file of that place.
 */
function etcBinds(): Binds {
  const out: Binds = { argv: [], bound: [] };
  for (const p of ETC_ALLOWED) {
    let link: string | undefined;
    try {
      if (lstatSync(p).isSymbolicLink()) link = readlinkSync(p);
    } catch {
      continue; // not on this system
    }
    if (link === undefined) {
      // -try: removed between the check and bwrap's mount, it is skipped rather than failing the run.
      out.argv.push('--ro-bind-try', p, p);
      out.bound.push(p);
      continue;
    }
    let real: string;
    try {
      real = realpathSync(p);
    } catch {
      continue; // a symlink to nothing
    }
    if (inSystemDirs(real)) out.argv.push('--symlink', link, p);
  }
  return out;
}

/**
 * The bwrap argv that runs `tail` (already an argv) in a fresh set of namespaces, with
 * `hidden` masked wherever a bind would show it (hidden.ts).
 */
export function bwrapArgs(
  dirs: Pick<CallDirs, 'root' | 'home'> & { run?: string },
  readOnly: readonly string[],
  tail: readonly string[],
  hidden: readonly string[] = [],
): string[] {
  const extra = new Set(readOnly);
  const binds: string[] = [];
  // -try: a configured path missing on this host is skipped rather than failing every run.
  for (const p of extra) binds.push('--ro-bind-try', p, p);
  const system = systemBinds();
  const etc = etcBinds();
  const hide = hiddenMasks(hidden, [...system.bound, ...etc.bound, ...extra], dirs.root);
  return [
    '--unshare-net',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    // bwrap is killed with us (no orphaned namespace), and setsid blocks TIOCSTI on a TTY.
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    '--cap-drop',
    'ALL',
    ...system.argv,
    // Of /etc only the allowlist (allowlist.ts): nothing else there is the CLI's to read. The
    // directory is made first, 0755 as on a host (the parents bwrap makes for a bind are 0700).
    '--dir',
    '/etc',
    ...etc.argv,
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    ...binds,
    ...hide.beforeCall,
    // Same path inside as outside, so HOME, TMPDIR and the CA file in the env stay valid.
    '--bind',
    dirs.root,
    dirs.root,
    // run/ (the launcher, the relay socket) is clibroker's, not the CLI's: read-only inside (a
    // unix socket still takes connections through a read-only bind)
    ...(dirs.run ? ['--ro-bind', dirs.run, dirs.run] : []),
    // Later mounts win: the hidden paths' masks come after every bind that could show them.
    ...hide.after,
    // The new root is a tmpfs bwrap made: read-only, so the directories it made for the binds
    // (/etc above all) take no files; /tmp and the call's directory are mounts of their own.
    '--remount-ro',
    '/',
    '--chdir',
    dirs.home,
    '--',
    ...tail,
  ];
}

/** The relay socket and launcher locations inside the call's run/ directory (read-only inside). */
export function runFiles(
  dirs: Pick<CallDirs, 'run'>,
  kind: LauncherKind,
): { socket: string; launcher: string } {
  return {
    socket: join(dirs.run, 'broker.sock'),
    launcher: join(dirs.run, kind === 'perl' ? 'launcher.pl' : 'launcher.cjs'),
  };
}

/** A unix-socket server that pipes every connection to the broker's TCP port on 127.0.0.1. */
export async function startRelay(
  socketPath: string,
  brokerPort: number,
): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((inner) => {
    const outer = netConnect(brokerPort, '127.0.0.1');
    // No Nagle on the leg to the broker either (the broker sets it on its own sockets).
    outer.setNoDelay(true);
    for (const s of [inner, outer]) {
      sockets.add(s);
      s.on('error', () => end());
      s.on('close', () => end());
    }
    function end(): void {
      for (const s of [inner, outer]) {
        s.destroy();
        sockets.delete(s);
      }
    }
    inner.pipe(outer);
    outer.pipe(inner);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The interpreter that runs the launcher inside, and what must be bound for it. */
export interface Launcher {
  kind: LauncherKind;
  /** its path, the same inside as outside */
  interpreter: string;
  /** host paths bound read-only for it: node's own directory when it lies outside the system directories */
  readOnly: readonly string[];
}

/** The probe's answer: the launcher to use, or why the isolated profile cannot run here. */
export type LauncherChoice =
  | { launcher: Launcher; unavailable?: undefined }
  | { launcher?: undefined; unavailable: string };

/** The node that runs clibroker (an nvm or tarball install lies outside /usr: its tree is bound). */
function nodeLauncher(): Launcher {
  const node = process.execPath;
  return { kind: 'node', interpreter: node, readOnly: inSystemDirs(node) ? [] : [dirname(dirname(node))] };
}

/** Runs `<interpreter> -e 0` under bwrap with the profile's own flags. */
function tryLauncher(bwrap: string, l: Launcher): Promise<{ why?: string; bwrapMissing?: boolean }> {
  return new Promise((resolve) => {
    const args = bwrapArgs({ root: '/tmp', home: '/' }, l.readOnly, [l.interpreter, '-e', '0']);
    const child = spawn(bwrap, args, { stdio: ['ignore', 'ignore', 'pipe'], env: {} });
    let err = '';
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    child.on('error', (e: NodeJS.ErrnoException) =>
      resolve({
        why: `${bwrap} cannot be run: ${e.code ?? e.message} (install the Debian package bubblewrap)`,
        bwrapMissing: true,
      }),
    );
    child.on('close', (code) =>
      resolve(code === 0 ? {} : { why: `${bwrap} failed (exit ${code}): ${err.trim().slice(0, 500)}` }),
    );
  });
}

async function chooseLauncher(bwrap: string, perl: string): Promise<LauncherChoice> {
  const viaPerl: Launcher = { kind: 'perl', interpreter: perl, readOnly: [] };
  const first = await tryLauncher(bwrap, viaPerl);
  if (first.why === undefined) return { launcher: viaPerl };
  if (first.bwrapMissing) return { unavailable: first.why };
  // No perl here (Alpine, minimal Fedora/RHEL images): the node launcher is as strict, only slower to start.
  const viaNode = nodeLauncher();
  const second = await tryLauncher(bwrap, viaNode);
  if (second.why === undefined) return { launcher: viaNode };
  return {
    unavailable:
      second.why === first.why ? first.why : `${first.why}; with node as the launcher instead: ${second.why}`,
  };
}

const probes = new Map<string, Promise<LauncherChoice>>();

/**
 * Which launcher the isolated profile runs here: bwrap is run with the profile's own namespace
 * flags, first with perl (the fast one), then, if that fails and bwrap itself could be
 * started, with the node that runs this process. Cached per bwrap and perl path for the
 * process, so every run of the process uses the same one.
 * @param perl where perl is looked for; tests point it at a path that does not exist to get node
 * @returns the launcher, or why the isolated profile cannot run (bwrap's own error text)
 */
export function isolatedLauncher(bwrap: string = BWRAP, perl: string = PERL): Promise<LauncherChoice> {
  const key = `${bwrap}\0${perl}`;
  let probe = probes.get(key);
  if (!probe) {
    probe = chooseLauncher(bwrap, perl);
    probes.set(key, probe);
  }
  return probe;
}

/**
 * Whether the isolated profile can run here (isolatedLauncher finds a launcher that runs under
 * bwrap). Cached per bwrap path for the process.
 * @returns undefined when it works, otherwise why not (bwrap's own error text)
 */
export async function isolationUnavailable(bwrap: string = BWRAP): Promise<string | undefined> {
  return (await isolatedLauncher(bwrap)).unavailable;
}
