/**
 * Micro-bench for the two head parsers (src/broker/http1/head-parser.ts for the child's requests,
 * src/broker/http1/response-head.ts for the vendor's answers): one whole head per push, the parser
 * reset between, as on a kept-alive connection.
 * Run: `npx tsx bench/micro/head-parse.ts`.
 */
import { HeadParser } from '../../src/broker/http1/head-parser.js';
import { ResponseHeadParser } from '../../src/broker/http1/response-head.js';
import { fmtNs, table, timeNs } from './timing.js';

const requests: Record<string, string> = {
  'bench client GET (4 fields)':
    'GET /repos/acme/app/issues?per_page=30 HTTP/1.1\r\nHost: api.bench.example\r\nUser-Agent: bench-client/1.0\r\nAccept: application/json\r\nConnection: keep-alive\r\n\r\n',
  'gh REST GET (8 fields)':
    'GET /repos/acme/app/issues?per_page=100 HTTP/1.1\r\nHost: api.github.com\r\nUser-Agent: GitHub CLI 2.62.0\r\nAccept: application/vnd.github.merge-info-preview+json, application/vnd.github.nebula-preview\r\nAuthorization: token gho_placeholder\r\nContent-Type: application/json; charset=utf-8\r\nGraphql-Features: merge_queue\r\nTime-Zone: Etc/UTC\r\nAccept-Encoding: gzip\r\n\r\n',
};
const responses: Record<string, string> = {
  'node https answer (5 fields)':
    'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 58\r\nDate: Wed, 02 Dec 2026 00:00:00 GMT\r\nConnection: keep-alive\r\nKeep-Alive: timeout=120\r\n\r\n',
  'GitHub-like answer (14 fields)': `HTTP/1.1 200 OK\r\n${[
    'Server: GitHub.com',
    'Date: Wed, 02 Dec 2026 00:00:00 GMT',
    'Content-Type: application/json; charset=utf-8',
    'Cache-Control: private, max-age=60, s-maxage=60',
    'Vary: Accept, Authorization, Cookie, X-GitHub-OTP',
    'ETag: W/"4f1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d"',
    'X-OAuth-Scopes: repo, read:org',
    'X-GitHub-Media-Type: github.v3; format=json',
    'X-RateLimit-Limit: 5000',
    'X-RateLimit-Remaining: 4999',
    'X-RateLimit-Reset: 1764633600',
    'X-RateLimit-Used: 1',
    'X-GitHub-Request-Id: 0A1B:2C3D:4E5F:6A7B:8C9D0E1F',
    'Transfer-Encoding: chunked',
  ].join('\r\n')}\r\n\r\n`,
};

const rows: Record<string, string>[] = [];
const results: Record<string, unknown>[] = [];
const hp = new HeadParser();
for (const [name, text] of Object.entries(requests)) {
  const buf = Buffer.from(text, 'latin1');
  const ns = timeNs(
    () => {
      const r = hp.push(buf);
      if (r.kind !== 'head') throw new Error(`${name}: ${r.kind}`);
      hp.reset();
    },
    20_000,
    15,
  );
  rows.push({ head: `request: ${name}`, bytes: String(buf.length), parse: fmtNs(ns) });
  results.push({ head: `request: ${name}`, ns: Math.round(ns) });
}
const rp = new ResponseHeadParser();
for (const [name, text] of Object.entries(responses)) {
  const buf = Buffer.from(text, 'latin1');
  const ns = timeNs(
    () => {
      const r = rp.push(buf, 0);
      if (r.kind !== 'head') throw new Error(`${name}: ${r.kind}`);
      rp.reset();
    },
    20_000,
    15,
  );
  rows.push({ head: `response: ${name}`, bytes: String(buf.length), parse: fmtNs(ns) });
  results.push({ head: `response: ${name}`, ns: Math.round(ns) });
}
table(rows);
console.log(JSON.stringify({ bench: 'head-parse', node: process.version, results }));
