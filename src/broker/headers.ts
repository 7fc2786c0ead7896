/**
 * The strip phase and the checks on what cannot be governed. Works on `rawHeaders`
 * (node's flat [name, value, …] list) in one pass, keeping order and repeats for upstream.
 */
import { CHILD_CREDENTIAL_HEADERS } from '../audit/redact.js';

/** Headers that never go upstream (hop-by-hop, proxy, method overrides, the child's credentials). */
const STRIPPED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  // the broker answers 100-continue to the child itself, when a phase reads the body
  'expect',
  // re-set from the CONNECT host by the upstream client
  'host',
  // removed before classification and before sending
  'x-http-method-override',
  'x-http-method',
  'x-method-override',
  // every credential the child sent (Authorization, Proxy-Authorization) is removed, on every host
  ...CHILD_CREDENTIAL_HEADERS,
]);

/** Names the strip phase removes; its credential names are the ones the log redactor censors. */
export const STRIPPED_HEADERS: ReadonlySet<string> = STRIPPED;

export interface StrippedHeaders {
  /** flat [name, value, …] for upstream, in the child's order */
  upstream: string[];
  /** lower-case name → value (repeats joined with ", "), for the policy phase */
  view: Record<string, string>;
  /** names removed, lower-case (audit and tests) */
  removed: string[];
}

/** Strips a request's raw headers for forwarding; also returns the policy view. */
export function stripHeaders(raw: readonly string[]): StrippedHeaders {
  const upstream: string[] = [];
  const view: Record<string, string> = Object.create(null);
  const removed: string[] = [];
  let connectionTokens: Set<string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (name === 'connection') {
      connectionTokens ??= new Set();
      for (const t of raw[i + 1]!.split(',')) connectionTokens.add(t.trim().toLowerCase());
    }
  }
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    const value = raw[i + 1]!;
    if (STRIPPED.has(lower) || connectionTokens?.has(lower)) {
      removed.push(lower);
      continue;
    }
    upstream.push(name, value);
    const prev = view[lower];
    view[lower] = prev === undefined ? value : `${prev}, ${value}`;
  }
  return { upstream, view, removed };
}

/** The request asks for a protocol switch (WebSocket, h2c). */
export function isUpgrade(raw: readonly string[]): boolean {
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === 'upgrade') return true;
  }
  return false;
}

// Request signing binds the client's own secret to the bytes of the request: the broker can
// neither stamp nor govern it, so it refuses rather than forward a request it cannot vouch for.
const SIGNING_AUTH =
  /^\s*(AWS4-HMAC-SHA256|AWS4-ECDSA-P256-SHA256|AWS\s|SharedKey\s|SharedKeyLite\s|OSS\s|OSS4-HMAC-SHA256|GOOG4-|HMAC-SHA256|Signature\s)/i;
const SIGNING_HEADERS = new Set([
  'x-amz-content-sha256',
  'x-amz-security-token',
  'signature-input',
  'x-goog-signature',
]);
const SIGNING_QUERY =
  /[?&](x-amz-signature|x-amz-credential|x-goog-signature|x-goog-credential|x-oss-signature|signature|sig)=/i;

/** The request carries a client-side signature (SigV4 header or query, HTTP message signatures, SAS-style query). */
export function signingScheme(raw: readonly string[], target: string): string | undefined {
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (name === 'authorization') {
      const m = SIGNING_AUTH.exec(raw[i + 1]!);
      if (m) return `authorization: ${m[1]!.trim()}`;
    } else if (SIGNING_HEADERS.has(name)) {
      return name;
    }
  }
  const q = target.indexOf('?');
  if (q !== -1) {
    const m = SIGNING_QUERY.exec(target.slice(q));
    if (m) return `query: ${m[1]}`;
  }
  return undefined;
}
