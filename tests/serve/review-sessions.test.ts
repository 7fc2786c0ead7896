import t from 'tap';
import type { ServeTokens } from '../../src/config/types.js';
import type { ToolHost } from '../../src/host/types.js';
import { startHttpServer } from '../../src/serve/http.js';
import { openSqliteStore } from '../../src/store/sqlite.js';

// The review page's sessions through the real server, spoken to in plain HTTP: a session is
// new at each sign-in, ends at sign-out on the server (a kept cookie is refused), ends when
// idle or old (the server's clock is the test's), and ends when the reviewer's token is
// rotated. A host that runs nothing stands behind the server: only the sessions are under test.

const host: ToolHost = {
  tools: () => [],
  runTool: () => Promise.reject(new Error('unused')),
  resume: () => Promise.reject(new Error('unused')),
  approve: () => Promise.reject(new Error('unused')),
  reject: () => Promise.reject(new Error('unused')),
  close: async () => {},
};

const IDLE_MS = 30 * 60_000;
const MAX_MS = 12 * 60 * 60_000;
let now = 1_000_000;
let tokens: ServeTokens = { reviewers: [['alice', 'alice-token']] };

const store = await openSqliteStore(':memory:');
const server = await startHttpServer(host, store, {
  port: 0,
  tokens: async () => tokens,
  approvalTimeoutMs: 1000,
  mcp: { cliTier: 'read', context: 'agent-step' },
  reviewSessions: { idleMs: IDLE_MS, maxMs: MAX_MS, now: () => now },
});
t.teardown(async () => {
  await server.close();
  await store.close();
});

/** Sign in (with the cookie a browser would send along): the Set-Cookie header whole, and the `name=value` to send back. */
async function signIn(token = 'alice-token', held?: string): Promise<{ setCookie: string; cookie: string }> {
  const r = await fetch(`${server.url}/review/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: server.url,
      ...(held ? { cookie: held } : {}),
    },
    body: new URLSearchParams({ token }).toString(),
  });
  if (r.status !== 303) throw new Error(`sign-in answered ${r.status}`);
  const setCookie = r.headers.get('set-cookie') ?? '';
  return { setCookie, cookie: setCookie.split(';')[0]! };
}

/** Who the cookie signs in on the page ('' when it shows the sign-in form). */
async function who(cookie: string): Promise<string> {
  const html = await (await fetch(`${server.url}/review`, { headers: { cookie } })).text();
  const m = /Signed in as <b class="who">([^<]*)<\/b>/.exec(html);
  if (!m && !html.includes('name="token"')) throw new Error('neither signed in nor a sign-in form');
  return m?.[1] ?? '';
}

const state = async (cookie: string) =>
  (await fetch(`${server.url}/review/state`, { headers: { cookie } })).status;

t.beforeEach(() => {
  tokens = { reviewers: [['alice', 'alice-token']] };
});

t.test('the cookie: HttpOnly, SameSite=Strict, Path=/review, Max-Age the absolute lifetime', async (t) => {
  const { setCookie, cookie } = await signIn();
  const attrs = setCookie.split(/;\s*/).slice(1);
  t.same(attrs.sort(), ['HttpOnly', `Max-Age=${MAX_MS / 1000}`, 'Path=/review', 'SameSite=Strict'].sort());
  t.notOk(cookie.includes('alice'), 'neither the token nor the name is in the cookie');
  t.equal(await who(cookie), 'alice');
});

t.test('each sign-in is a new session', async (t) => {
  const a = await signIn();
  const b = await signIn();
  t.not(a.cookie, b.cookie);
  t.equal(await who(a.cookie), 'alice', 'the first still works');
  t.equal(await who(b.cookie), 'alice');
  const c = await signIn('alice-token', b.cookie);
  t.equal(await who(b.cookie), '', 'signing in again in the same browser ends the session it held');
  t.equal(await who(c.cookie), 'alice');
  t.equal(await who(a.cookie), 'alice', 'another browser keeps its own');
});

t.test('after sign-out the kept cookie is refused', async (t) => {
  const { cookie } = await signIn();
  const other = await signIn();
  t.equal(await who(cookie), 'alice');
  const out = await fetch(`${server.url}/review/logout`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, origin: server.url },
  });
  t.equal(out.status, 303);
  t.match(out.headers.get('set-cookie'), /^clibroker_review=;.*Max-Age=0/, 'the browser is told to drop it');
  t.equal(await who(cookie), '', 'replayed: the sign-in form');
  t.equal(await state(cookie), 401, 'replayed: /review/state refuses it');
  const decide = await fetch(`${server.url}/review/approvals/x/approve`, {
    method: 'POST',
    headers: { cookie, origin: server.url },
  });
  t.equal(decide.status, 401, 'replayed: a decision is refused');
  t.match(await decide.json(), { error: { code: 'SERVE_UNAUTHORIZED' } });
  t.equal(await who(other.cookie), 'alice', "another sign-in's session is not ended");
});

t.test('a sign-out posted from another origin ends nothing', async (t) => {
  const { cookie } = await signIn();
  const out = await fetch(`${server.url}/review/logout`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, origin: 'http://evil.example' },
  });
  t.equal(out.status, 403);
  t.equal(await who(cookie), 'alice');
});

t.test('a session unused for its idle lifetime is refused', async (t) => {
  const { cookie } = await signIn();
  now += IDLE_MS - 1;
  t.equal(await who(cookie), 'alice', 'used just inside the idle lifetime');
  now += IDLE_MS - 1;
  t.equal(await state(cookie), 200, 'the background refresh is answered…');
  now += 1;
  t.equal(await who(cookie), '', '…but is not activity: idle since the last page');
  now += 1;
  t.equal(await state(cookie), 401, 'and stays ended');
});

t.test('a session past its absolute lifetime is refused, however busy', async (t) => {
  const { cookie } = await signIn();
  const issued = now;
  let used = 0;
  while (now + IDLE_MS / 2 < issued + MAX_MS) {
    now += IDLE_MS / 2;
    if ((await who(cookie)) !== 'alice') return t.fail(`ended early, at ${now - issued} ms`);
    used++;
  }
  t.equal(used, MAX_MS / (IDLE_MS / 2) - 1, 'used every half idle lifetime until just before the end');
  now = issued + MAX_MS;
  t.equal(await who(cookie), '', 'ended at the absolute lifetime');
});

t.test("rotating the reviewer's token ends the session", async (t) => {
  const { cookie } = await signIn();
  t.equal(await who(cookie), 'alice');
  tokens = { reviewers: [['alice', 'alice-token-rotated']] };
  t.equal(await who(cookie), '', 'ended by the rotation');
  tokens = { reviewers: [['alice', 'alice-token']] };
  t.equal(await who(cookie), '', 'and stays ended if the old token comes back');
  const again = await signIn('alice-token');
  t.equal(await who(again.cookie), 'alice', 'a new sign-in works');
});
