/**
 * The pipeline's one walk over a request's fields (scanHead) answers what the separate walks
 * it replaced answered: the strip phase's lists, the signing check, and the Host, Expect,
 * Content-Length and Transfer-Encoding values as node's header object joins them.
 */
import t from 'tap';
import { scanHead, signingScheme, stripHeaders } from '../../src/broker/headers.js';

/** node's joined view of one field (what the checks read before), lower-case name. */
function joined(raw: readonly string[], name: string): string | undefined {
  let out: string | undefined;
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i]!.toLowerCase() === name) out = out === undefined ? raw[i + 1]! : `${out}, ${raw[i + 1]!}`;
  return out;
}
function hosts(raw: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'host') n++;
  return n;
}

const heads: Record<string, string[]> = {
  'curl GET': ['Host', 'api.example.com', 'User-Agent', 'curl/8', 'Accept', '*/*'],
  'undici keep-alive': ['host', 'api.example.com', 'connection', 'keep-alive'],
  'Host twice, differently': ['Host', 'a.example.com', 'X-A', '1', 'HOST', 'b.example.com'],
  'Expect twice': ['Host', 'h', 'Expect', '100-continue', 'expect', '100-continue'],
  'Connection names a later field': ['Host', 'h', 'Connection', 'X-Secret', 'X-Secret', '1', 'X-Kept', '2'],
  'Connection names an earlier field': ['X-Hop', '1', 'Host', 'h', 'Connection', 'close, X-Hop'],
  'Connection names Content-Length': ['Host', 'h', 'Content-Length', '5', 'Connection', 'content-length'],
  'Connection names only stripped fields': [
    'Host',
    'h',
    'Connection',
    'keep-alive, TE, upgrade',
    'TE',
    'trailers',
  ],
  'two Content-Length fields': ['Host', 'h', 'Content-Length', '5', 'content-length', '5'],
  'chunked and a length': ['Host', 'h', 'Transfer-Encoding', 'chunked', 'Content-Length', '0'],
  'SigV4 Authorization': ['Host', 'h', 'Authorization', 'AWS4-HMAC-SHA256 Credential=x', 'X-Amz-Date', '1'],
  'a bearer token, then an amz token': [
    'Authorization',
    'Bearer t',
    'X-Amz-Security-Token',
    's',
    'Host',
    'h',
  ],
  'a signature header first': ['Signature-Input', 'sig1=()', 'Authorization', 'SharedKey a:b', 'Host', 'h'],
  'method overrides and proxy credentials': [
    'Host',
    'h',
    'X-HTTP-Method-Override',
    'DELETE',
    'Proxy-Authorization',
    'Basic eA==',
    'X-Kept',
    'a',
    'x-kept',
    'b',
  ],
  'no fields': [],
};

for (const [name, raw] of Object.entries(heads)) {
  t.test(name, (t) => {
    const scan = scanHead(raw);
    const strip = stripHeaders(raw);
    t.same(scan.upstream, strip.upstream, 'upstream fields');
    t.same({ ...scan.view }, { ...strip.view }, 'the policy view');
    t.same(scan.removed, strip.removed, 'removed names');
    t.equal(scan.signing, signingScheme(raw, '/'), 'signing');
    t.equal(scan.hosts, hosts(raw), 'Host count');
    t.equal(scan.host, joined(raw, 'host'), 'Host');
    t.equal(scan.expect, joined(raw, 'expect'), 'Expect');
    t.equal(scan.contentLength, joined(raw, 'content-length'), 'Content-Length');
    t.equal(scan.transferEncoding, joined(raw, 'transfer-encoding'), 'Transfer-Encoding');
    t.end();
  });
}
