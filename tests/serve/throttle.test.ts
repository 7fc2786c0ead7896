/**
 * Guessing is slowed: wrong tokens at the Platform API and wrong reviewer sign-ins lock the
 * client's address out (429 SERVE_RATE_LIMITED with Retry-After, the right token refused too),
 * all addresses together have a bound of their own, each lock-out is on the request's log
 * line, and a further failure after a lock-out locks again for longer. Through the real server,
 * with small limits and a clock the test moves (nothing sleeps). Other addresses are other
 * loopback addresses (127.0.0.2, …) bound as the client's source.
 */
import { request } from 'node:http';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { createHost } from '../../src/host/host.js';
import { startHttpServer } from '../../src/serve/http.js';
import { THROTTLE_LIMITS } from '../../src/serve/throttle.js';
import { leakGuard } from '../helpers/leaks.js';
import { seedDeployment } from '../helpers/seed.js';
import { type Json, TOKENS } from './helpers.js';

let now = 1_000_000_000;
Object.assign(THROTTLE_LIMITS, {
  perAddress: 3,
  overall: 1000,
  windowMs: 60_000,
  lockMs: 10_000,
  maxLockMs: 40_000,
  now: () => now,
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: Json;
}

async function server(t: Test) {
  const d = await seedDeployment((c, dir) => ({
    ...c,
    serve: {
      port: 0,
      executorToken: dir.secret('executor', TOKENS.executor),
      mcpToken: dir.secret('mcp', TOKENS.mcp),
      reviewers: { alice: dir.secret('alice', TOKENS.alice) },
    },
  }));
  const guard = leakGuard(Object.values(TOKENS));
  const config = await loadConfig(d.file);
  const host = await createHost(config);
  const s = await startHttpServer(host, host.store, {
    host: '127.0.0.1',
    port: 0,
    tokens: () => config.serveTokens(),
    approvalTimeoutMs: 60_000,
    mcp: { cliTier: 'read', context: 'agent-step' },
    logger: guard.logger,
  });
  t.teardown(async () => {
    await s.close();
    await host.close();
    await d.close();
    guard.assertClean();
  });
  /** one request from `from` (a loopback address) */
  const send = (
    method: string,
    path: string,
    opts: { from?: string; token?: string; form?: string } = {},
  ): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = {};
      if (opts.token !== undefined) headers['authorization'] = `Bearer ${opts.token}`;
      if (opts.form !== undefined) {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        headers['origin'] = s.url;
      }
      const req = request(
        `${s.url}${path}`,
        { method, headers, localAddress: opts.from ?? '127.0.0.1', agent: false },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            text += c;
          });
          res.on('end', () => {
            let json: Json;
            try {
              json = JSON.parse(text);
            } catch {
              json = { text };
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, json });
          });
        },
      );
      req.on('error', reject);
      req.end(opts.form);
    });
  const login = (token: string, from?: string) =>
    send('POST', '/review/login', { form: `token=${encodeURIComponent(token)}`, ...(from ? { from } : {}) });
  const lines = () =>
    guard.text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Json)
      .filter((l) => l.event === 'serve.request');
  return { send, login, lines };
}

/** Retry-After as the seconds it names, checked to be one. */
function retryAfter(t: Test, a: Answer): number {
  const h = a.headers['retry-after'];
  t.match(h, /^[1-9][0-9]*$/, 'Retry-After names whole seconds');
  t.equal(a.json.error?.details?.retryAfterSeconds, Number(h), 'the body names the same wait');
  return Number(h);
}

t.test('wrong sign-ins lock the address out; the right token waits too, then signs in', async (t) => {
  const s = await server(t);
  for (let i = 0; i < 3; i++) t.equal((await s.login(`wrong-${i}`)).status, 401, `wrong sign-in ${i + 1}`);
  const locked = await s.login(TOKENS.alice);
  t.equal(locked.status, 429, 'the right token is refused while locked out');
  t.equal(locked.json.error.code, 'SERVE_RATE_LIMITED');
  t.equal(locked.json.error.retry, true);
  const first = retryAfter(t, locked);
  t.equal((await s.login(TOKENS.alice, '127.0.0.2')).status, 303, 'another address signs in meanwhile');

  now += first * 1000;
  const ok = await s.login(TOKENS.alice);
  t.equal(ok.status, 303, 'after the wait, the right token signs in');
  t.match(ok.headers['set-cookie'], /clibroker_review=/);

  // a success forgives nothing: one more failure before a quiet minute locks again, for longer
  t.equal((await s.login('wrong-again')).status, 401);
  const again = await s.login(TOKENS.alice);
  t.equal(again.status, 429, 'one failure after a lock-out locks again');
  t.ok(retryAfter(t, again) > first, 'the second lock-out is longer than the first');

  // recorded: the failure that locked the address out, and each refusal while locked out
  const l = s.lines();
  const locks = l.filter((x) => x.lockedOut);
  t.equal(locks.length, 2, 'one line per lock-out');
  t.match(locks[0], { address: '127.0.0.1', lockedOut: [{ scope: 'address' }], status: 401 });
  const limited = l.filter((x) => x.code === 'SERVE_RATE_LIMITED');
  t.equal(limited.length, 2, 'each 429 is on its request line');
  t.match(limited[0], { status: 429, address: '127.0.0.1', limited: 'address' });
});

t.test('a locked-out address makes no more lock-out lines however often it tries', async (t) => {
  const s = await server(t);
  for (let i = 0; i < 3; i++) await s.login(`wrong-${i}`);
  for (let i = 0; i < 20; i++) t.equal((await s.login(`wrong-more-${i}`)).status, 429);
  t.equal(s.lines().filter((x) => x.lockedOut).length, 1, 'one lock-out line');
});

t.test('the bearer API: wrong tokens lock the address out, the executor token too', async (t) => {
  const s = await server(t);
  t.equal((await s.send('GET', '/v1/tools', { token: TOKENS.executor })).status, 200);
  for (let i = 0; i < 3; i++)
    t.equal((await s.send('GET', '/v1/tools', { token: `wrong-${i}` })).status, 401, `wrong ${i + 1}`);
  const locked = await s.send('GET', '/v1/tools', { token: TOKENS.executor });
  t.equal(locked.status, 429);
  t.equal(locked.json.error.code, 'SERVE_RATE_LIMITED');
  const wait = retryAfter(t, locked);
  t.equal((await s.send('GET', '/v1/tools', { token: TOKENS.executor, from: '127.0.0.3' })).status, 200);
  const mcp = await s.send('POST', '/mcp', { token: TOKENS.mcp });
  t.equal(mcp.status, 429, '/mcp refuses the address too');
  t.equal(mcp.json.error.data.code, 'SERVE_RATE_LIMITED');
  now += wait * 1000;
  t.equal((await s.send('GET', '/v1/tools', { token: TOKENS.executor })).status, 200, 'after the wait');
  t.ok(
    s.lines().some((x) => x.code === 'SERVE_RATE_LIMITED' && x.status === 429),
    'the refusal is on its request line',
  );
});

t.test('all addresses together have a bound: a spread guess is slowed too', async (t) => {
  const saved = { ...THROTTLE_LIMITS };
  Object.assign(THROTTLE_LIMITS, { perAddress: 1000, overall: 4 });
  // a server's limits are taken at its first request
  t.teardown(() => {
    Object.assign(THROTTLE_LIMITS, saved);
  });
  const s = await server(t);
  for (let i = 0; i < 4; i++)
    t.equal(
      (await s.send('GET', '/v1/tools', { token: `wrong-${i}`, from: `127.0.0.${10 + i}` })).status,
      401,
      `one wrong token from 127.0.0.${10 + i}`,
    );
  const locked = await s.send('GET', '/v1/tools', { token: TOKENS.executor, from: '127.0.0.50' });
  t.equal(locked.status, 429, 'an address that never failed waits too');
  t.equal(locked.json.error.details.scope, 'overall');
  const wait = retryAfter(t, locked);
  t.equal((await s.login(TOKENS.alice, '127.0.0.51')).status, 429, 'the sign-in too');
  now += wait * 1000;
  t.equal((await s.send('GET', '/v1/tools', { token: TOKENS.executor, from: '127.0.0.50' })).status, 200);
});
