/**
 * The package as published, packed once per source tree and shared by every test that installs
 * or inspects the tarball: `npm pack` from a clean copy of the repository (no dist/, so
 * `prepare` builds it, as it does for a registry publish).
 *
 * Packing builds the whole package (tsc's declarations and the esbuild pass), ~20 s of CPU; three
 * test files need the same tarball. It is kept under node_modules/.cache/clibroker-pack/, named by
 * a hash of every file the build can read, so a changed source packs again and an unchanged one
 * is never packed twice. A lock directory (holding its owner's pid) makes concurrent test files
 * wait for one pack; a lock whose owner died is taken over.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
/** What a clean copy leaves out: installed packages, builds, git, test output. */
const NOT_COPIED = new Set(['node_modules', 'dist', '.git', '.tap', 'coverage']);
/** What the build never reads: left out of the hash so editing a test does not pack again. */
const NOT_HASHED = new Set([...NOT_COPIED, 'tests', 'bench']);
const LOCK_WAIT_MS = 600_000;
const KEEP = 3;

export interface Packed {
  /** The .tgz, to be read, never written. */
  readonly tarball: string;
  /** The paths `npm pack` listed, relative to the package root. */
  readonly files: readonly string[];
}

/** A hash of the package's inputs: every path and its bytes, in a stable order. */
function treeHash(): string {
  const hash = createHash('sha256');
  const walk = (dir: string, rel: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (rel === '' && NOT_HASHED.has(e.name)) continue;
      const path = join(dir, e.name);
      const relPath = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) walk(path, relPath);
      else if (e.isFile()) hash.update(`${relPath}\0`).update(readFileSync(path)).update('\0');
    }
  };
  walk(root, '');
  return hash.digest('hex').slice(0, 16);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock, or returns false when another live process holds it. */
function tryLock(lock: string): boolean {
  try {
    mkdirSync(lock);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    let owner = Number.NaN;
    try {
      owner = Number(readFileSync(join(lock, 'pid'), 'utf8'));
    } catch {
      return false; // its owner is between mkdir and writing its pid
    }
    if (!Number.isInteger(owner) || alive(owner)) return false;
    rmSync(lock, { recursive: true, force: true }); // its owner died mid-pack
    return tryLock(lock);
  }
  writeFileSync(join(lock, 'pid'), String(process.pid));
  return true;
}

async function pack(dest: string): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'clibroker-pack-'));
  try {
    const copy = join(work, 'copy');
    cpSync(root, copy, { recursive: true, filter: (src) => !NOT_COPIED.has(basename(src)) });
    symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'), 'dir');
    if (existsSync(join(copy, 'dist'))) throw new Error('the clean copy has a dist/ before packing');
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], {
      cwd: copy,
      maxBuffer: 16 << 20,
    });
    const [{ filename, files }] = JSON.parse(stdout) as [{ filename: string; files: { path: string }[] }];
    const staged = join(work, 'out');
    mkdirSync(staged);
    renameSync(join(work, filename), join(staged, 'package.tgz'));
    writeFileSync(join(staged, 'files.json'), JSON.stringify(files.map((f) => f.path)));
    renameSync(staged, dest); // whole or not at all: a reader never sees half a pack
    prune(dirname(dest));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Keeps the newest few packs: a working tree packs again after every source change. */
function prune(cache: string): void {
  const packs = readdirSync(cache)
    .filter((n) => !n.endsWith('.lock'))
    .map((n) => ({ path: join(cache, n), mtime: statSync(join(cache, n)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const old of packs.slice(KEEP)) rmSync(old.path, { recursive: true, force: true });
}

/** The tarball of this tree, packing it the first time any test asks. */
export async function packedTarball(): Promise<Packed> {
  const cache = join(root, 'node_modules', '.cache', 'clibroker-pack');
  mkdirSync(cache, { recursive: true });
  const dest = join(cache, treeHash());
  const lock = `${dest}.lock`;
  const until = Date.now() + LOCK_WAIT_MS;
  while (!existsSync(dest)) {
    if (tryLock(lock)) {
      try {
        if (!existsSync(dest)) await pack(dest);
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
      break;
    }
    if (Date.now() > until) throw new Error(`waited ${LOCK_WAIT_MS / 1000} s for ${lock}`);
    await sleep(250);
  }
  return {
    tarball: join(dest, 'package.tgz'),
    files: JSON.parse(readFileSync(join(dest, 'files.json'), 'utf8')) as string[],
  };
}
