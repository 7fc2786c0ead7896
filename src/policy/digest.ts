/**
 * The request digest a person approves: sha256 over a canonical encoding of
 * method, host, path+query and body. Every field is length-prefixed, so no two different
 * requests share an encoding (`GET` + `/a` never collides with `GE` + `T/a`).
 */
import { createHash } from 'node:crypto';

/** The domain tag; a new encoding gets a new tag, so old approvals can never match it. */
export const DIGEST_TAG = 'clibroker-request-v1';

function field(h: ReturnType<typeof createHash>, bytes: Buffer): void {
  h.update(`${bytes.length}:`);
  h.update(bytes);
  h.update(',');
}

/** The host as compared: lower case, no trailing dot, no default port. */
export function canonicalHost(host: string): string {
  let h = host.toLowerCase();
  if (h.endsWith(':443')) h = h.slice(0, -4);
  if (h.endsWith('.')) h = h.slice(0, -1);
  return h;
}

/**
 * Hex sha256 of `clibroker-request-v1` NUL netstring(method) netstring(host)
 * netstring(target) netstring(body), where netstring(x) = `<byte length>:<bytes>,`.
 * The method and target are taken exactly as sent (UTF-8); an absent body is an empty one.
 */
export function requestDigest(method: string, host: string, target: string, body?: Buffer | string): string {
  const h = createHash('sha256');
  h.update(DIGEST_TAG);
  h.update('\0');
  field(h, Buffer.from(method, 'utf8'));
  field(h, Buffer.from(canonicalHost(host), 'utf8'));
  field(h, Buffer.from(target, 'utf8'));
  field(
    h,
    body === undefined ? Buffer.alloc(0) : typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
  );
  return h.digest('hex');
}
