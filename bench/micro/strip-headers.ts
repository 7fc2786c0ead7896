/**
 * Micro-bench for the strip phase (src/broker/headers.ts): `stripHeaders` on the raw headers
 * gh, az and curl send, and the request-signing check that runs beside it; then the walks the
 * pipeline made over the same fields before (node-style header object, Host count, signing,
 * strip) against its one walk now (`scanHead` and the query's signing check).
 * Run: `npx tsx bench/micro/strip-headers.ts`.
 */
import { scanHead, signingQuery, signingScheme, stripHeaders } from '../../src/broker/headers.js';
import { fmtNs, table, timeNs } from './timing.js';

const gh = [
  'Host', 'api.github.com',
  'User-Agent', 'GitHub CLI 2.62.0',
  'Accept', 'application/vnd.github.merge-info-preview+json, application/vnd.github.nebula-preview',
  'Authorization', 'token gho_placeholder',
  'Content-Type', 'application/json; charset=utf-8',
  'Graphql-Features', 'merge_queue',
  'Time-Zone', 'Etc/UTC',
  'Accept-Encoding', 'gzip',
]; // biome-ignore format: name/value pairs
const curl = [
  'Host',
  'api.example.com',
  'User-Agent',
  'curl/7.88.1',
  'Accept',
  '*/*',
  'Proxy-Connection',
  'Keep-Alive',
];
const hopByHop = [
  ...gh,
  'Connection',
  'keep-alive, x-trace',
  'X-Trace',
  '1',
  'Keep-Alive',
  'timeout=5',
  'X-HTTP-Method-Override',
  'DELETE',
  'TE',
  'trailers',
];
const az = [
  ...gh.slice(0, 6),
  ...Array.from({ length: 32 }, (_, i) => [`x-ms-header-${i}`, `value-${i}-${'v'.repeat(24)}`]).flat(),
  'x-ms-client-request-id', '0b6a1f1e-8c1d-4c84-9d1e-0f7a5c3b2a10',
]; // biome-ignore format: name/value pairs

// what undici (node's fetch) sends on every request of a keep-alive connection
const undici = ['host', 'api.example.com', 'connection', 'keep-alive', 'accept', '*/*', 'user-agent', 'node'];
const cases: Record<string, { raw: string[]; target: string }> = {
  'curl GET (4 headers)': { raw: curl, target: '/v1/items' },
  'undici GET (Connection: keep-alive)': { raw: undici, target: '/repos/acme/app' },
  'gh REST (8 headers, Authorization)': { raw: gh, target: '/repos/acme/app/issues?per_page=100' },
  'gh + hop-by-hop (Connection tokens, override)': { raw: hopByHop, target: '/repos/acme/app' },
  'az-like (36 headers)': { raw: az, target: '/subscriptions/x/resourceGroups?api-version=2021-04-01' },
};

/** The walks before scanHead: the reader's header object, the Host count, signing, strip. */
function walks(raw: readonly string[], target: string): unknown {
  const h: Record<string, string> = Object.create(null);
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const had = h[name];
    h[name] = had === undefined ? raw[i + 1]! : `${had}, ${raw[i + 1]!}`;
  }
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') hosts++;
  return [h, hosts, signingScheme(raw, target), stripHeaders(raw)];
}

const rows: Record<string, string>[] = [];
const results: Record<string, unknown>[] = [];
for (const [name, { raw, target }] of Object.entries(cases)) {
  const strip = timeNs(() => stripHeaders(raw), 20_000, 15);
  const sign = timeNs(() => signingScheme(raw, target), 20_000, 15);
  const before = timeNs(() => walks(raw, target), 20_000, 15);
  const one = timeNs(() => [scanHead(raw), signingQuery(target)], 20_000, 15);
  const removed = stripHeaders(raw).removed;
  rows.push({
    case: name,
    removed: removed.join(' ') || '—',
    stripHeaders: fmtNs(strip),
    signingScheme: fmtNs(sign),
    'four walks': fmtNs(before),
    scanHead: fmtNs(one),
  });
  results.push({
    case: name,
    stripNs: Math.round(strip),
    signingNs: Math.round(sign),
    walksNs: Math.round(before),
    scanNs: Math.round(one),
    removed,
  });
}
table(rows);
console.log(JSON.stringify({ bench: 'strip-headers', node: process.version, results }));
