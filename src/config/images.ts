/**
 * An image's checks at load: its executable is a regular file (not a symbolic link that
 * someone could point elsewhere), owned by root or the loading user, not writable by group
 * or other, in directories nobody else can rename or replace it in, and it has the pinned
 * sha256. The result carries the verifier that runs before every call.
 */
import type { Stats } from 'node:fs';
import { markComputedDigest } from '../audit/secret-shape.js';
import { lstat, realpath, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileIdentity, hashFile, verifier } from './pin.js';
import type { ConfigProblems } from './problems.js';
import type { ImageConfig, PinnedImage } from './types.js';

const errno = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? 'error';

function trustedOwner(st: Stats): boolean {
  return st.uid === 0 || st.uid === process.getuid?.();
}

/** Why `dir` (the executable's own directory when `own`) lets someone else replace what it holds; undefined when it does not. */
async function looseDirectory(dir: string, own: boolean): Promise<string | undefined> {
  let st: Stats;
  try {
    st = await stat(dir);
  } catch (e) {
    return `its directory ${dir} cannot be examined (${errno(e)})`;
  }
  if (!trustedOwner(st))
    return `the directory ${dir} is owned by uid ${st.uid}, not root or this process's user`;
  // a sticky ancestor (/tmp) lets nobody else rename what is in it; the executable's own directory must be closed
  if ((st.mode & 0o022) !== 0 && (own || (st.mode & 0o1000) === 0)) {
    return `the directory ${dir} has mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')}: group or other may replace files in it`;
  }
  return undefined;
}

/** Check one well-formed image and pin it; undefined (with problems added) when it cannot be pinned. */
export async function checkImage(
  name: string,
  img: ImageConfig,
  out: ConfigProblems,
): Promise<PinnedImage | undefined> {
  const at = ['images', name, 'executable'];
  const path = img.executable;
  let st: Stats;
  try {
    st = await lstat(path);
  } catch (e) {
    out.add('CONFIG_IMAGE_UNPINNED', at, `${path} cannot be examined (${errno(e)}): pin an existing program`);
    return undefined;
  }
  if (st.isSymbolicLink()) {
    const target = await realpath(path).catch(() => undefined);
    out.add(
      'CONFIG_IMAGE_UNPINNED',
      at,
      `${path} is a symbolic link, which could be pointed elsewhere after review: pin the program itself${target ? ` (${target})` : ''}`,
    );
    return undefined;
  }
  if (!st.isFile()) {
    out.add('CONFIG_IMAGE_UNPINNED', at, `${path} is not a regular file`);
    return undefined;
  }
  let ok = true;
  if (!trustedOwner(st)) {
    out.add(
      'CONFIG_IMAGE_WRITABLE',
      at,
      `${path} is owned by uid ${st.uid}, not root or this process's user, who could rewrite it`,
    );
    ok = false;
  }
  if ((st.mode & 0o022) !== 0) {
    out.add(
      'CONFIG_IMAGE_WRITABLE',
      at,
      `${path} has mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')}: group or other may rewrite it; chmod go-w it`,
    );
    ok = false;
  }
  let dir = dirname(path);
  for (let own = true; ; own = false) {
    const why = await looseDirectory(dir, own);
    if (why) {
      out.add('CONFIG_IMAGE_WRITABLE', at, `${path} could be replaced: ${why}`);
      ok = false;
      break;
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  let actual: string;
  try {
    actual = await hashFile(path);
  } catch (e) {
    out.add('CONFIG_IMAGE_UNPINNED', at, `${path} cannot be read (${errno(e)})`);
    return undefined;
  }
  if (actual !== img.sha256) {
    // the found digest is shown so the operator can pin it after review: not a secret
    markComputedDigest(actual);
    out.add(
      'CONFIG_IMAGE_HASH_MISMATCH',
      ['images', name, 'sha256'],
      `${path} has sha256 ${actual}, not the pinned one: review this binary, then pin its sha256 (sha256sum ${path})`,
    );
    return undefined;
  }
  if (!ok) return undefined;
  return {
    name,
    executable: path,
    sha256: img.sha256,
    profile: img.profile,
    readOnlyPaths: [...(img.readOnlyPaths ?? [])],
    verify: verifier(path, img.sha256, fileIdentity(st), name),
  };
}
