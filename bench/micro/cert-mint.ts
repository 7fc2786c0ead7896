/**
 * Micro-bench for a cold host's TLS setup (src/broker/ca.ts, leaf-cache.ts): minting a leaf,
 * then createSecureContext from its PEM — split into the key and the certificate parts, since
 * the context, not the signature, is what a cold connection mostly pays for (S4
 * anchors: minting with @peculiar/x509 ~1.4 ms, createSecureContext ~0.6 ms).
 * Run: `npx tsx bench/micro/cert-mint.ts`.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { createCertificateAuthority } from '../../src/broker/ca.js';
import { LeafCache, leafSet } from '../../src/broker/leaf-cache.js';
import { fmtNs, table, timeNs } from './timing.js';

const ca = createCertificateAuthority();
const leaf = ca.mintLeaf('api.github.com');
const chain = leaf.certPem + ca.certPem;
// The same leaf key as SEC1 ("EC PRIVATE KEY") PEM: OpenSSL 3 decodes it by another route.
const sec1 = createPrivateKey(leaf.keyPem).export({ type: 'sec1', format: 'pem' }) as string;
let n = 0;
const cache = new LeafCache(ca, 1 << 20);
const egressSet = leafSet(Array.from({ length: 32 }, (_, i) => `e${i}.bench.example`));

const cases: Record<string, () => unknown> = {
  'mintLeaf (DER template + one ECDSA P-256 signature)': () => ca.mintLeaf(`h${n++}.bench.example`),
  'createSecureContext({}) (empty context)': () => createSecureContext({}),
  'createSecureContext({ key }) (PEM PKCS#8 EC key)': () => createSecureContext({ key: leaf.keyPem }),
  'createSecureContext({ key }) (same key, SEC1 PEM)': () => createSecureContext({ key: sec1 }),
  'createSecureContext({ cert }) (leaf + CA PEM)': () => createSecureContext({ cert: chain }),
  'createSecureContext({ cert }) (leaf PEM only)': () => createSecureContext({ cert: leaf.certPem }),
  'createSecureContext({ key: SEC1, cert: leaf only })': () =>
    createSecureContext({ key: sec1, cert: leaf.certPem, minVersion: 'TLSv1.2' }),
  'createSecureContext({ key, cert: leaf + CA })': () =>
    createSecureContext({ key: leaf.keyPem, cert: chain, minVersion: 'TLSv1.2' }),
  'createSecureContext({ key, cert: leaf only }) (what LeafCache does)': () =>
    createSecureContext({ key: leaf.keyPem, cert: leaf.certPem, minVersion: 'TLSv1.2' }),
  'createPrivateKey(PEM) (same key, for comparison)': () => createPrivateKey(leaf.keyPem),
  'new X509Certificate(leaf PEM) (for comparison)': () => new X509Certificate(leaf.certPem),
  'LeafCache.forHost(new host outside egress) (mint + context)': () =>
    cache.forHost(`c${n++}.bench.example`, undefined),
  'LeafCache.forHost(new host of a session egress set) (cached set leaf)': () =>
    cache.forHost('e7.bench.example', egressSet),
};

const rows: Record<string, string>[] = [];
const results: Record<string, unknown>[] = [];
for (const [name, fn] of Object.entries(cases)) {
  const ns = timeNs(fn, 50, 21);
  rows.push({ case: name, 'per call': fmtNs(ns), 'calls/s': Math.round(1e9 / ns).toLocaleString('en') });
  results.push({ case: name, ns: Math.round(ns) });
}
// A 640-host egress list, each host CONNECTed to once (S4L's pattern), a fresh cache per run:
// what the cache spends per first CONNECT, and how many contexts it keeps.
const large = Array.from({ length: 640 }, (_, i) => `l${i}.bench.example`);
const perHost: number[] = [];
let kept = 0;
for (let r = 0; r < 5; r++) {
  const fresh = new LeafCache(ca);
  const set = leafSet(large);
  const t0 = process.hrtime.bigint();
  for (const h of large) fresh.forHost(h, set);
  perHost.push(Number(process.hrtime.bigint() - t0) / large.length);
  kept = fresh.size;
}
const firstUse = perHost.sort((a, b) => a - b)[2]!;
const firstUseCase = `LeafCache.forHost, each host of a 640-host list once (${kept} contexts kept)`;
rows.push({
  case: firstUseCase,
  'per call': fmtNs(firstUse),
  'calls/s': Math.round(1e9 / firstUse).toLocaleString('en'),
});
results.push({ case: firstUseCase, ns: Math.round(firstUse) });
table(rows);
console.log(
  JSON.stringify({ bench: 'cert-mint', node: process.version, openssl: process.versions.openssl, results }),
);
