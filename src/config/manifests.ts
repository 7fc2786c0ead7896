/**
 * An installed extension's manifest at load: read (a file) or taken (an object), hashed
 * and compared with the pinned sha256, then validated as any manifest is. Manifests are
 * not secret: a mismatch message shows the hash found, so the operator can pin it after
 * reviewing that release.
 */
import { readFile } from 'node:fs/promises';
import { markComputedDigest } from '../audit/secret-shape.js';
import { isBrokerError } from '../errors.js';
import { parseExtensionManifest } from '../manifest/define.js';
import type { ManifestProblem } from '../manifest/problems.js';
import type { ExtensionManifest } from '../manifest/types.js';
import { manifestSha256 } from './canonical.js';
import type { ConfigProblems } from './problems.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Where a JSON.parse failure is, without the excerpt of the text V8 puts in its message. */
function syntaxPosition(e: unknown): string {
  const m = /position (\d+)/.exec((e as Error).message ?? '');
  return m ? ` (a syntax error at position ${m[1]})` : '';
}

/**
 * Load, hash-check and validate one manifest; the validated copy, or undefined with
 * problems added. `file` is the resolved path when the install names a file.
 */
export async function checkManifest(
  key: string,
  manifest: string | Record<string, unknown>,
  file: string | undefined,
  pinned: string,
  out: ConfigProblems,
): Promise<ExtensionManifest | undefined> {
  const at = ['extensions', key, 'manifest'];
  let value: unknown = manifest;
  let actual: string;
  if (file !== undefined) {
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch (e) {
      out.add(
        'CONFIG_MANIFEST_UNREADABLE',
        at,
        `cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
      );
      return undefined;
    }
    actual = manifestSha256(bytes);
    try {
      value = JSON.parse(utf8.decode(bytes));
    } catch (e) {
      out.add('CONFIG_MANIFEST_UNREADABLE', at, `${file} is not UTF-8 JSON${syntaxPosition(e)}`);
      return undefined;
    }
  } else {
    actual = manifestSha256(manifest as object);
  }
  if (actual !== pinned) {
    // the found digest is shown so the operator can pin it after review: not a secret
    markComputedDigest(actual);
    const how =
      file !== undefined
        ? `the file ${file} has sha256 ${actual}`
        : `the object's canonical JSON has sha256 ${actual}`;
    out.add(
      'CONFIG_MANIFEST_HASH_MISMATCH',
      ['extensions', key, 'sha256'],
      `${how}, not the pinned one: this is not the reviewed release; review it, then pin that sha256`,
    );
  }
  let parsed: ExtensionManifest;
  try {
    parsed = parseExtensionManifest(value);
  } catch (e) {
    if (!isBrokerError(e) || e.code !== 'MANIFEST_INVALID') throw e;
    const base = `extensions.${key}.manifest`;
    for (const p of (e.details?.['problems'] ?? []) as ManifestProblem[]) {
      const sub = p.path === '(root)' ? '' : p.path.startsWith('[') ? p.path : `.${p.path}`;
      out.addAt(
        'CONFIG_MANIFEST_INVALID',
        `${base}${sub}`,
        `${p.code}: expected ${p.expected}${p.value === undefined ? '' : ` (got ${p.value})`}`,
      );
    }
    return undefined;
  }
  if (parsed.id !== key) {
    out.add(
      'CONFIG_EXTENSION_ID_MISMATCH',
      ['extensions', key],
      `the manifest's id is "${parsed.id}": install it under the key "${parsed.id}"`,
    );
    return undefined;
  }
  // a mismatch is already a problem (the load fails); its CLIs are still checked, so every problem shows at once
  return parsed;
}
