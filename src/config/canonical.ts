/**
 * The hash an operator pins for a manifest. A file is pinned by its bytes (`sha256sum
 * manifest.json`); a manifest a host passes as an object is pinned by its canonical JSON,
 * so the same reviewed object hashes the same whatever order its keys were written in.
 */
import { createHash } from 'node:crypto';

function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) out[k] = sorted((v as Record<string, unknown>)[k]);
  return out;
}

/**
 * JSON with every object's keys sorted (by UTF-16 code unit, recursively), no whitespace;
 * array order kept, `undefined` members left out as JSON.stringify does.
 */
export function canonicalManifestJson(manifest: unknown): string {
  return JSON.stringify(sorted(manifest));
}

/** sha256 (lower-case hex) of a manifest: of the bytes for a file's contents, of `canonicalManifestJson` for an object. */
export function manifestSha256(manifest: Uint8Array | string | object): string {
  const h = createHash('sha256');
  if (manifest instanceof Uint8Array) h.update(manifest);
  else if (typeof manifest === 'string') h.update(manifest, 'utf8');
  else h.update(canonicalManifestJson(manifest), 'utf8');
  return h.digest('hex');
}
