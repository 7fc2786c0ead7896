/**
 * Audit volume per call is bounded: a hostile child repeating what costs it nothing (requests
 * past the budget, tunnels past the cap, plain HTTP, upgrades, head timeouts, bad heads) gets
 * at most FOLD_PER_CODE events of a code and FOLD_TOTAL in all one by one; the rest are
 * counted, and the session's close writes one summary per code whose `folded` is exact.
 */
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import t, { type Test } from 'tap';
import { FOLD_PER_CODE, FOLD_TOTAL } from '../../src/broker/fold.js';
import type { Session } from '../../src/broker/session.js';
import type { AuditEvent } from '../../src/broker/types.js';
import {
  brokerFixture,
  exchange,
  type Fixture,
  openTunnel,
  proxyAuth,
  rawConnect,
  until,
} from '../helpers/broker.js';

const HOST = 'api.example.com';
const connectHead = (s: Session, target = `${HOST}:443`): string =>
  `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\nProxy-Authorization: ${proxyAuth(s.proxyUrl)}\r\n\r\n`;
const get = (path: string): string => `GET ${path} HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`;

/** One code's events: those written one by one, and its summaries. */
function tally(events: readonly AuditEvent[], code: string): { one: number; summaries: AuditEvent[] } {
  const mine = events.filter((e) => e.code === code);
  return { one: mine.filter((e) => e.folded === undefined).length, summaries: mine.filter((e) => e.folded) };
}

/**
 * Closes the session and checks a code's events: one by one within the bound, one summary
 * when anything was folded, and one by one plus folded equal to the refusals made.
 */
async function closeAndCheck(t: Test, f: Fixture, s: Session, code: string, refused: number): Promise<void> {
  t.ok(await until(() => s.stats.refused >= refused), `${refused} refusals made`);
  t.equal(s.stats.refused, refused, 'no more refusals than requests refused');
  s.close();
  const { one, summaries } = tally(f.events, code);
  t.ok(one >= 1 && one <= FOLD_PER_CODE, `${one} events one by one (at most ${FOLD_PER_CODE})`);
  t.equal(summaries.length, refused > one ? 1 : 0, 'one summary for what was folded');
  const folded = summaries[0]?.folded ?? 0;
  t.equal(one + folded, refused, `${one} one by one + ${folded} folded = ${refused} refused`);
  if (summaries[0]) {
    t.match(summaries[0], {
      type: 'egress.blocked',
      decision: 'deny',
      code,
      outcome: 'not_sent',
      session: s.id,
      firstSeen: String,
      lastSeen: String,
    });
    t.ok(summaries[0].firstSeen! <= summaries[0].lastSeen!, 'firstSeen before lastSeen');
    t.equal(f.events.at(-1), summaries[0], 'the summary is the last event');
  }
}

/** A TLS tunnel whose client never closes its side by itself once the broker ends its own. */
async function halfOpenTunnel(s: Session, port: number): Promise<TLSSocket> {
  const raw = netConnect({ port, host: '127.0.0.1', allowHalfOpen: true });
  await new Promise<void>((resolve, reject) => {
    let buf = '';
    const onData = (c: Buffer): void => {
      buf += c.toString('latin1');
      if (!buf.includes('\r\n\r\n')) return;
      raw.off('data', onData);
      if (buf.startsWith('HTTP/1.1 200')) resolve();
      else reject(new Error(buf));
    };
    raw.on('data', onData);
    raw.write(connectHead(s));
  });
  const tls = await new Promise<TLSSocket>((resolve, reject) => {
    const c = tlsConnect(
      { socket: raw, servername: HOST, ca: s.caCertPem, ALPNProtocols: ['http/1.1'] },
      () => resolve(c),
    );
    c.once('error', reject);
  });
  tls.on('error', () => {});
  return tls;
}

t.test(
  'past the budget: the crossing request is refused and its tunnel closed; pipelined requests behind it are never read, new tunnels are refused, and the count is exact',
  async (t) => {
    const f = await brokerFixture(t);
    const budget = 4;
    const s = f.session({ limits: { maxRequests: budget } });
    const tls = await openTunnel(s, f.broker.port, HOST);
    tls.on('error', () => {});
    let got = '';
    tls.on('data', (c: Buffer) => (got += c.toString('latin1')));
    let closed = false;
    tls.on('close', () => (closed = true));
    // the budget, then 500 more pipelined in the same write
    const raw = Array.from({ length: budget + 500 }, (_, i) => get(`/n/${i + 1}`)).join('');
    tls.write(raw);
    t.ok(await until(() => closed), 'the tunnel was closed after the refusal');
    t.equal((got.match(/HTTP\/1\.1 429 /g) ?? []).length, 1, 'one 429: the request that crossed the budget');
    t.match(got, /CLI_REQUEST_BUDGET_EXCEEDED/);
    t.equal(f.upstream.received.length, budget, 'the budget reached the vendor, nothing more');
    // 30 new tunnels: each CONNECT is refused with the budget's code, none opens
    for (let i = 0; i < 30; i++) {
      const c = await rawConnect(f.broker.port, connectHead(s));
      t.match(c.head, /^HTTP\/1\.1 429 /, `CONNECT ${i + 1} refused`);
      c.socket.destroy();
    }
    t.equal(s.openTunnels, 0);
    await closeAndCheck(t, f, s, 'CLI_REQUEST_BUDGET_EXCEEDED', 31);
    t.equal(
      f.events.filter((e) => e.type === 'egress.allowed').length,
      budget,
      'every forwarded request has its event',
    );
    t.ok(f.events.length <= budget + FOLD_PER_CODE + 1, `${f.events.length} events in all`);
  },
);

t.test('the tunnel cap refused forty times: at most eight events, the rest folded', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session({ limits: { maxTunnels: 2 } });
  const held = [await openTunnel(s, f.broker.port, HOST), await openTunnel(s, f.broker.port, HOST)];
  for (let i = 0; i < 40; i++) {
    const c = await rawConnect(f.broker.port, connectHead(s));
    t.match(c.head, /^HTTP\/1\.1 429 /);
    c.socket.destroy();
  }
  for (const h of held) h.destroy();
  await closeAndCheck(t, f, s, 'CLI_TUNNEL_LIMIT_EXCEEDED', 40);
  t.equal(f.events.length, FOLD_PER_CODE + 1);
});

t.test('plain-HTTP proxying repeated thirty times: at most eight events, the rest folded', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session();
  const auth = proxyAuth(s.proxyUrl);
  await Promise.all(
    Array.from(
      { length: 30 },
      (_, i) =>
        new Promise<void>((resolve) => {
          const sock = netConnect(f.broker.port, '127.0.0.1');
          sock.on('error', () => resolve());
          sock.on('close', () => resolve());
          sock.resume();
          sock.write(
            `GET http://${HOST}/p/${i} HTTP/1.1\r\nHost: ${HOST}\r\nProxy-Authorization: ${auth}\r\n\r\n`,
          );
        }),
    ),
  );
  await closeAndCheck(t, f, s, 'CLI_PLAIN_HTTP_REFUSED', 30);
  t.equal(f.events.length, FOLD_PER_CODE + 1);
});

t.test('upgrade requests on twenty tunnels: at most eight events, the rest folded', async (t) => {
  const f = await brokerFixture(t);
  const s = f.session();
  for (let i = 0; i < 20; i++) {
    const tls = await openTunnel(s, f.broker.port, HOST);
    tls.on('error', () => {});
    const out = await exchange(
      tls,
      `GET /ws/${i} HTTP/1.1\r\nHost: ${HOST}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
    );
    t.match(out, /^HTTP\/1\.1 403 /);
    tls.destroy();
  }
  t.equal(f.upstream.received.length, 0);
  await closeAndCheck(t, f, s, 'CLI_UPGRADE_REFUSED', 20);
});

t.test(
  'head timeouts on twenty tunnels with a short head limit: at most eight events, the rest folded',
  async (t) => {
    // Each tunnel starts its head as soon as it is open: one that sent nothing within the limit
    // would be an idle spare, closed quietly with no event (on a loaded machine, opening twenty
    // takes longer than a short limit).
    const f = await brokerFixture(t, { broker: { limits: { requestHeadTimeoutMs: 1000 } } });
    const s = f.session();
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        const tls = await openTunnel(s, f.broker.port, HOST);
        tls.on('error', () => {});
        tls.write(`GET /slow HTTP/1.1\r\nHost: ${HOST}\r\n`); // never finished
      }),
    );
    t.ok(await until(() => s.openTunnels === 0), 'every tunnel was closed');
    await closeAndCheck(t, f, s, 'CLI_REQUEST_HEAD_TIMEOUT', 20);
  },
);

t.test(
  'many codes at once: at most 64 events one by one in all, each code its first, every count exact',
  async (t) => {
    const f = await brokerFixture(t);
    const s = f.session();
    const auth = proxyAuth(s.proxyUrl);
    const inTunnel = async (raw: string): Promise<void> => {
      const tls = await openTunnel(s, f.broker.port, HOST);
      tls.on('error', () => {});
      await exchange(tls, raw, (o) => o.endsWith('}'));
      tls.destroy();
    };
    const byConnect = async (target: string): Promise<void> => {
      const c = await rawConnect(f.broker.port, connectHead(s, target));
      c.socket.destroy();
    };
    const cases: Record<string, () => Promise<void>> = {
      CLI_PORT_REFUSED: () => byConnect(`${HOST}:8443`),
      CLI_HOST_INVALID: () => byConnect('127.0.0.1:443'),
      CLI_PLAIN_HTTP_REFUSED: () =>
        new Promise<void>((resolve) => {
          const sock = netConnect(f.broker.port, '127.0.0.1');
          sock.on('close', () => resolve());
          sock.on('error', () => {});
          sock.resume();
          sock.write(
            `GET http://${HOST}/p HTTP/1.1\r\nHost: ${HOST}\r\nProxy-Authorization: ${auth}\r\n\r\n`,
          );
        }),
      CLI_BAD_REQUEST: () => inTunnel('GARBAGE\r\n\r\n'),
      CLI_HEADERS_TOO_LARGE: () =>
        inTunnel(`GET /x HTTP/1.1\r\nHost: ${HOST}\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`),
      CLI_UPGRADE_REFUSED: () =>
        inTunnel(`GET /ws HTTP/1.1\r\nHost: ${HOST}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`),
      CLI_TUNNEL_CONNECT_REFUSED: () => inTunnel(`CONNECT ${HOST}:443 HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`),
      CLI_HOST_MISMATCH: () => inTunnel('GET /x HTTP/1.1\r\n\r\n'),
      CLI_TRACE_REFUSED: () => inTunnel(`TRACE /x HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`),
    };
    const codes = Object.keys(cases);
    const rounds = 10;
    // round by round, each refusal audited before the next: the order is the same every run
    for (let r = 0; r < rounds; r++)
      for (const code of codes) {
        const before = s.stats.refused;
        await cases[code]!();
        t.ok(await until(() => s.stats.refused === before + 1), `${code} round ${r + 1} refused once`);
      }
    s.close();
    const one = f.events.filter((e) => e.folded === undefined);
    t.equal(one.length, FOLD_TOTAL, `${FOLD_TOTAL} events one by one in all`);
    for (const code of codes) {
      const { one: n, summaries } = tally(f.events, code);
      t.ok(n >= 1 && n <= FOLD_PER_CODE, `${code}: ${n} one by one`);
      t.equal(summaries.length, 1, `${code}: one summary`);
      t.equal(n + (summaries[0]?.folded ?? 0), rounds, `${code}: the count is exact`);
    }
    t.equal(f.events.length, FOLD_TOTAL + codes.length);
    t.equal(f.upstream.received.length, 0);
  },
);

t.test('a half-open tunnel after a close-after-refusal is destroyed by its own timer', async (t) => {
  const f = await brokerFixture(t, { broker: { limits: { requestHeadTimeoutMs: 300 } } });
  const s = f.session({ limits: { maxRequests: 1 } });
  const warm = await openTunnel(s, f.broker.port, HOST);
  t.match(await exchange(warm, get('/1'), (o) => o.endsWith('}')), /^HTTP\/1\.1 200/);
  warm.destroy();
  const tls = await halfOpenTunnel(s, f.broker.port);
  let got = '';
  let ended = false;
  tls.on('data', (c: Buffer) => (got += c.toString('latin1')));
  tls.on('end', () => (ended = true));
  tls.write(get('/2'));
  t.ok(await until(() => ended), 'the broker ended its side after the refusal');
  t.match(got, /^HTTP\/1\.1 429 /);
  t.equal(s.openTunnels, 1, 'the child keeps its side open');
  t.ok(await until(() => s.openTunnels === 0, 3000), 'the broker destroyed the half-open socket');
  t.equal(f.events.length, 2, 'one allowed, one refused: nothing more');
  tls.destroy();
});
