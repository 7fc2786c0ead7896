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

/**
 * What the pipeline reads of a request's fields, from one walk over them: the strip phase's
 * output, and the fields the target, size and ungovernable checks look at (repeats joined
 * with ", ", as node's header object joins them), with the signing header found first.
 */
export interface HeadScan extends StrippedHeaders {
  /** `Host` fields sent (node keeps only the first; servers differ on which wins) */
  hosts: number;
  host: string | undefined;
  expect: string | undefined;
  contentLength: string | undefined;
  transferEncoding: string | undefined;
  /** the first client-side signature among the fields ({@link signingScheme} without the query) */
  signing: string | undefined;
}

/**
 * {@link stripHeaders} and the checks' fields in one pass. A `Connection` field naming a
 * field that is not stripped anyway changes what is stripped: that rare head is stripped again
 * by {@link stripHeaders} itself, so both always agree.
 */
export function scanHead(raw: readonly string[]): HeadScan {
  const upstream: string[] = [];
  const view: Record<string, string> = Object.create(null);
  const removed: string[] = [];
  let hosts = 0;
  let host: string | undefined;
  let expect: string | undefined;
  let contentLength: string | undefined;
  let transferEncoding: string | undefined;
  let signing: string | undefined;
  let restrip = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    const value = raw[i + 1]!;
    if (signing === undefined) signing = signingField(lower, value);
    if (STRIPPED.has(lower)) {
      removed.push(lower);
      if (lower === 'host') {
        hosts++;
        host = host === undefined ? value : `${host}, ${value}`;
      } else if (lower === 'expect') expect = expect === undefined ? value : `${expect}, ${value}`;
      else if (lower === 'transfer-encoding')
        transferEncoding = transferEncoding === undefined ? value : `${transferEncoding}, ${value}`;
      else if (lower === 'connection' && !restrip) restrip = namesOthers(value);
      continue;
    }
    if (lower === 'content-length')
      contentLength = contentLength === undefined ? value : `${contentLength}, ${value}`;
    upstream.push(name, value);
    const prev = view[lower];
    view[lower] = prev === undefined ? value : `${prev}, ${value}`;
  }
  const kept = restrip ? stripHeaders(raw) : { upstream, view, removed };
  return {
    upstream: kept.upstream,
    view: kept.view,
    removed: kept.removed,
    hosts,
    host,
    expect,
    contentLength,
    transferEncoding,
    signing,
  };
}

/** A `Connection` value naming a field the strip phase would not remove by name. */
function namesOthers(value: string): boolean {
  // what nearly every client sends, first: nothing named, no split
  const v = value.toLowerCase();
  if (v === 'keep-alive' || v === 'close') return false;
  for (const t of value.split(',')) {
    const token = t.trim().toLowerCase();
    if (token !== '' && !STRIPPED.has(token)) return true;
  }
  return false;
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
    const found = signingField(raw[i]!.toLowerCase(), raw[i + 1]!);
    if (found !== undefined) return found;
  }
  return signingQuery(target);
}

/** One field's client-side signature, if it carries one (`lower` is its lower-case name). */
function signingField(lower: string, value: string): string | undefined {
  if (lower === 'authorization') {
    const m = SIGNING_AUTH.exec(value);
    return m ? `authorization: ${m[1]!.trim()}` : undefined;
  }
  return SIGNING_HEADERS.has(lower) ? lower : undefined;
}

/** The target's query carries a signature (SigV4 presigned, SAS-style `sig=`). */
export function signingQuery(target: string): string | undefined {
  const q = target.indexOf('?');
  if (q === -1) return undefined;
  const m = SIGNING_QUERY.exec(target.slice(q));
  return m ? `query: ${m[1]}` : undefined;
}
