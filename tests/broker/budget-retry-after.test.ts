/**
 * docs/phases.md, "Decisions recorded here": the 429 for the request budget carries no
 * Retry-After — retrying cannot succeed, so nothing may tell a client to wait and try again.
 * Both places that answer it: a request inside a tunnel past the budget, and a CONNECT of a
 * session already past it.
 */
import t from 'tap';
import { brokerFixture, exchange, openTunnel, proxyAuth, rawConnect } from '../helpers/broker.js';

const MAX = 2;

/** The header names of a raw HTTP/1.1 answer head, lower-cased. */
function headerNames(answer: string): string[] {
  const head = answer.split('\r\n\r\n')[0] ?? '';
  return head
    .split('\r\n')
    .slice(1)
    .map((l) => l.slice(0, l.indexOf(':')).trim().toLowerCase());
}

t.test('the budget 429 inside a tunnel, and at the next CONNECT, has no Retry-After', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session({ limits: { maxRequests: MAX } });
  const tls = await openTunnel(s, f.broker.port, 'api.example.com');
  t.teardown(() => tls.destroy());
  let last = '';
  for (let i = 1; i <= MAX + 1; i++) {
    last = await exchange(tls, `GET /n/${i} HTTP/1.1\r\nHost: api.example.com\r\n\r\n`, (o) =>
      /\r\n\r\n[\s\S]*\}$/.test(o),
    );
    if (i === MAX) t.match(last, /^HTTP\/1\.1 200/, 'the last request within the budget passes');
  }
  t.match(last, /^HTTP\/1\.1 429 Too Many Requests/, 'the request past the budget: 429');
  t.match(last, /CLI_REQUEST_BUDGET_EXCEEDED/);
  t.notOk(headerNames(last).includes('retry-after'), 'no Retry-After on the in-tunnel 429');
  t.notMatch(last, /retry-after/i, 'not anywhere in the answer');
  t.equal(f.upstream.received.length, MAX, 'the refused request never reached upstream');

  // The session is past its budget: a new tunnel is refused at CONNECT with the same 429.
  const { head, socket } = await rawConnect(
    f.broker.port,
    `CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\nProxy-Authorization: ${proxyAuth(s.proxyUrl)}\r\n\r\n`,
  );
  t.teardown(() => socket.destroy());
  t.match(head, /^HTTP\/1\.1 429 Too Many Requests/, 'the CONNECT past the budget: 429');
  t.notOk(headerNames(head).includes('retry-after'), 'no Retry-After on the CONNECT 429');
});
