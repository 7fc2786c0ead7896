/**
 * A session's redaction memo answers what redactPath and redactHost answer, for any target and
 * host in any order, and holds no more than its bound.
 */
import t from 'tap';
import { RedactMemo, redactHost, redactPath } from '../../src/audit/redact.js';

const TOKEN = 'ghp_0123456789abcdefABCDEF0123456789abcd';
const targets = [
  '/repos/acme/app/issues?per_page=100',
  '/repos/acme/app/issues?token=' + TOKEN,
  '/repos/acme/app/issues#' + TOKEN,
  `/repos/acme/app/${TOKEN}`,
  `/repos/acme/app/${TOKEN}?x=1`,
  `/repos/acme/app/${TOKEN.slice(0, 20)}`,
  '/repos/acme/app/issues',
  '/repos/acme/app/issues/',
  '/repos/acme/%61pp/issues',
  '/u/user:pass@example.com/x',
  '/',
  '',
  `/${'a'.repeat(3000)}`,
];
const hosts = ['api.github.com', `${TOKEN.toLowerCase()}.example.com`, 'api.github.com.', 'API.github.com'];

t.test('every target and host reads as the functions read it, repeated, in any order', (t) => {
  const memo = new RedactMemo();
  const order = [...targets, ...[...targets].reverse(), ...targets];
  for (const target of order) t.equal(memo.path(target), redactPath(target), `path ${target.slice(0, 60)}`);
  for (const host of [...hosts, ...hosts]) t.equal(memo.host(host), redactHost(host), `host ${host}`);
  t.end();
});

t.test('a path is never answered for another', (t) => {
  const memo = new RedactMemo();
  t.equal(memo.path('/repos/acme/app'), '/repos/acme/app');
  t.equal(memo.path(`/repos/acme/app/${TOKEN}`), '/repos/acme/app/{redacted}');
  t.equal(memo.path('/repos/acme/app?q=1'), '/repos/acme/app', 'the query is no part of the key');
  t.equal(memo.path(`/repos/acme/app#/${TOKEN}`), '/repos/acme/app', 'nor is a fragment');
  t.end();
});

t.test('the memo is bounded, and very long paths are not kept', (t) => {
  const memo = new RedactMemo(8);
  for (let i = 0; i < 50; i++) memo.path(`/repos/acme/app/${i}`);
  for (let i = 0; i < 50; i++) memo.host(`h${i}.example.com`);
  t.equal(memo.size, 16);
  const fresh = new RedactMemo(8);
  fresh.path(`/${'a'.repeat(3000)}`);
  fresh.host(`${'a'.repeat(60)}.`.repeat(5));
  t.equal(fresh.size, 0);
  t.end();
});
