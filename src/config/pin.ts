/**
 * Pinned executables. The loader hashes each image's program once; before every run,
 * `verify()` compares the file's identity (device, inode, size, modification and change
 * times) with the one recorded, and hashes the file again only when that changed, so an
 * unchanged binary costs one lstat per run. A replaced or rewritten file whose bytes differ
 * is refused with TOOL_VENDOR_CLI_EXECUTABLE_CHANGED and nothing runs.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { type BrokerError, brokerError } from '../errors.js';

/** What identifies one version of a file without reading it. */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

/** The identity fields of a stat result. */
export function fileIdentity(st: Stats): FileIdentity {
  return { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs };
}

function sameIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return (
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeMs === b.mtimeMs &&
    a.ctimeMs === b.ctimeMs
  );
}

/** sha256 (lower-case hex) of a file, read as a stream (gh is ~40 MB). */
export function hashFile(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('error', reject)
      .on('data', (chunk) => h.update(chunk))
      .on('end', () => resolve(h.digest('hex')));
  });
}

/** A pinned file's check before each run. */
export interface PinnedExecutable {
  executable: string;
  sha256: string;
  /** @throws BrokerError TOOL_VENDOR_CLI_EXECUTABLE_CHANGED */
  verify(): Promise<void>;
}

function changed(image: string, path: string, why: string): BrokerError {
  return brokerError(
    'TOOL_VENDOR_CLI_EXECUTABLE_CHANGED',
    { image, path, why },
    { details: { image, executable: path } },
  );
}

/**
 * The verifier for a file already hashed with `sha256` while it had `identity`. The
 * identity is renewed when the file changed on disk but its bytes did not (touched,
 * rewritten with the same content).
 */
export function verifier(
  path: string,
  sha256: string,
  identity: FileIdentity,
  image: string,
): () => Promise<void> {
  let known = identity;
  return async () => {
    let st: Stats;
    try {
      st = await lstat(path);
    } catch (e) {
      throw changed(image, path, `cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    if (!st.isFile()) throw changed(image, path, 'is no longer a regular file');
    const now = fileIdentity(st);
    if (sameIdentity(now, known)) return;
    let actual: string;
    try {
      actual = await hashFile(path);
    } catch (e) {
      throw changed(image, path, `cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    if (actual !== sha256) throw changed(image, path, 'no longer has the pinned sha256');
    // identity taken before the hash: a write during hashing changes it again, so the next run re-hashes
    known = now;
  };
}

/**
 * Pin a file: hash it now and return its verifier.
 * @throws BrokerError TOOL_VENDOR_CLI_EXECUTABLE_CHANGED when it is not a regular file or its sha256 differs
 */
export async function pinExecutable(path: string, sha256: string, image = path): Promise<PinnedExecutable> {
  let st: Stats;
  try {
    st = await lstat(path);
  } catch (e) {
    throw changed(image, path, `cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (!st.isFile()) throw changed(image, path, 'is not a regular file');
  const actual = await hashFile(path);
  if (actual !== sha256) throw changed(image, path, 'does not have the pinned sha256');
  return { executable: path, sha256, verify: verifier(path, sha256, fileIdentity(st), image) };
}
