import type { IncomingMessage } from 'node:http';
import t, { type Test } from 'tap';
import type { ServeTokens } from '../../src/config/types.js';
import { authorize, type Role } from '../../src/serve/auth.js';
import { ReviewSessions } from '../../src/serve/sessions.js';
import { THROTTLE_LIMITS, Throttle } from '../../src/serve/throttle.js';
import { ARGS_PREVIEW_TOTAL_CHARS, approvalView } from '../../src/serve/view.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Approval, Store } from '../../src/store/types.js';

// Who a bearer token is, as a table: the roles, the closed doors, a reused token.

const tokens: ServeTokens = {
  executor: 'exec-1',
  mcp: 'mcp-1',
  reviewers: [
    ['alice', 'alice-1'],
    ['bob', 'bob-1'],
  ],
};
const req = (authorization?: string) =>
  ({ headers: authorization === undefined ? {} : { authorization } }) as IncomingMessage;

const cases: Record<string, [ServeTokens, string | undefined, Role[], string]> = {
  'the executor runs tools': [tokens, 'Bearer exec-1', ['executor'], 'executor:executor'],
  'a reviewer by name': [tokens, 'Bearer bob-1', ['reviewer'], 'reviewer:bob'],
  'the scheme is case-insensitive': [tokens, 'bearer mcp-1', ['mcp'], 'mcp:mcp'],
  'no header': [tokens, undefined, ['executor'], 'SERVE_UNAUTHORIZED'],
  'another scheme': [tokens, 'Basic exec-1', ['executor'], 'SERVE_UNAUTHORIZED'],
  'a token of nobody': [tokens, 'Bearer exec-2', ['executor'], 'SERVE_UNAUTHORIZED'],
  'a reviewer cannot run tools': [tokens, 'Bearer alice-1', ['executor'], 'SERVE_FORBIDDEN'],
  'the executor cannot decide': [tokens, 'Bearer exec-1', ['reviewer'], 'SERVE_FORBIDDEN'],
  'a door without a token is closed': [
    { reviewers: [] },
    'Bearer exec-1',
    ['executor'],
    'SERVE_UNAUTHORIZED',
  ],
  'an empty token never matches': [
    { executor: '', reviewers: [] },
    'Bearer ',
    ['executor'],
    'SERVE_UNAUTHORIZED',
  ],
  'one token in two roles fails closed': [
    { executor: 'same', reviewers: [['alice', 'same']] },
    'Bearer same',
    ['executor'],
    'SERVE_FORBIDDEN',
  ],
};

t.plan(Object.keys(cases).length + 7);
/** A store of the test's own, closed when it ends. */
function store(t: Test): Store {
  const s = openSqliteStore(':memory:');
  t.teardown(() => s.close());
  return s;
}

for (const [name, [tk, header, allowed, want]] of Object.entries(cases)) {
  let got: string;
  try {
    const c = await authorize(req(header), tk, allowed, new Throttle());
    got = `${c.role}:${c.who}`;
  } catch (e) {
    got = (e as { code: string }).code;
  }
  t.equal(got, want, name);
}

t.test('a review session: new per sign-in, a mac keyed by the token, ended by rotation', async (t) => {
  const sessions = new ReviewSessions(store(t));
  const v = await sessions.issue('alice', 'alice-1');
  const w = await sessions.issue('alice', 'alice-1');
  t.not(v, w, 'each sign-in a new session');
  t.notOk(v.includes('alice-1'), 'not the token');
  t.notOk(v.includes('alice'), 'not the name either');
  t.same(await sessions.caller(`x=1; clibroker_review=${v}`, tokens), { role: 'reviewer', who: 'alice' });
  const [id, mac] = v.split('.') as [string, string];
  const flipped = `${id}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
  t.equal(await sessions.caller(`clibroker_review=${flipped}`, tokens), undefined, 'a forged mac');
  t.equal(
    await sessions.caller(`clibroker_review=${v}`, tokens),
    undefined,
    'a forged mac ended the session',
  );
  t.equal(
    await sessions.caller(`clibroker_review=${w}`, { reviewers: [['alice', 'rotated']] }),
    undefined,
    'a rotated token ends the session',
  );
  t.equal(
    await sessions.caller(`clibroker_review=${w}`, tokens),
    undefined,
    'ended for good, even rotated back',
  );
  const x = await sessions.issue('bob', 'bob-1');
  await sessions.end(`clibroker_review=${x}`, tokens);
  t.equal(await sessions.caller(`clibroker_review=${x}`, tokens), undefined, 'ended by sign-out');
  t.equal(await sessions.caller(undefined, tokens), undefined);
});

t.test('a review session ends when idle or old; a background read is not activity', async (t) => {
  let now = 0;
  const idleMs = 100;
  const maxMs = 1000;
  const sessions = new ReviewSessions(store(t), { idleMs, maxMs, now: () => now });
  t.equal(sessions.maxAgeSeconds, 1, 'the cookie lives as long as the session may');
  const c = `clibroker_review=${await sessions.issue('alice', 'alice-1')}`;
  now += idleMs - 1;
  t.ok(await sessions.caller(c, tokens, false), 'just inside the idle lifetime');
  now += 1;
  t.equal(await sessions.caller(c, tokens), undefined, 'a read without touching did not keep it alive');
  const issued = now;
  const d = `clibroker_review=${await sessions.issue('alice', 'alice-1')}`;
  let uses = 0;
  let answered = 0;
  while (now + idleMs - 1 < issued + maxMs) {
    now += idleMs - 1;
    uses++;
    if (await sessions.caller(d, tokens)) answered++;
  }
  t.ok(uses > 5);
  t.equal(answered, uses, 'every use within the idle lifetime signed in');
  t.ok(await sessions.caller(d, tokens, false), 'still alive just before the absolute lifetime');
  now = issued + maxMs;
  t.equal(await sessions.caller(d, tokens), undefined, 'past the absolute lifetime, however busy');
});

t.test('the review sessions are bounded per reviewer and in all, the oldest ended first', async (t) => {
  const sessions = new ReviewSessions(store(t), { perReviewer: 2, overall: 3 });
  const c = (v: string) => `clibroker_review=${v}`;
  const a1 = await sessions.issue('alice', 'alice-1');
  const a2 = await sessions.issue('alice', 'alice-1');
  const a3 = await sessions.issue('alice', 'alice-1');
  t.equal(await sessions.caller(c(a1), tokens), undefined, "alice's oldest ended by her third sign-in");
  t.ok(await sessions.caller(c(a2), tokens));
  t.ok(await sessions.caller(c(a3), tokens));
  const b1 = await sessions.issue('bob', 'bob-1');
  const b2 = await sessions.issue('bob', 'bob-1');
  t.equal(await sessions.caller(c(a2), tokens), undefined, 'the oldest of all ended');
  t.ok(await sessions.caller(c(a3), tokens));
  t.ok(await sessions.caller(c(b1), tokens));
  t.ok(await sessions.caller(c(b2), tokens));
});

t.test("a reviewer token that is also another role's opens no review session", async (t) => {
  const shared: ServeTokens = {
    executor: 'same',
    reviewers: [
      ['alice', 'same'],
      ['bob', 'bob-1'],
    ],
  };
  const sessions = new ReviewSessions(store(t));
  t.equal(
    await sessions.caller(`clibroker_review=${await sessions.issue('alice', 'same')}`, shared),
    undefined,
    'alice',
  );
  t.same(
    await sessions.caller(`clibroker_review=${await sessions.issue('bob', 'bob-1')}`, shared),
    { role: 'reviewer', who: 'bob' },
    'a reviewer with a token of their own still signs in',
  );
});

t.test('the review preview: redacted before it is cut, and bounded in all', async (t) => {
  const token = `ghp_${'A1b2C3d4E5'.repeat(4)}`;
  // the token straddles the 1024-character cut of one argument
  const arg = `${'x'.repeat(1010)} ${token}`;
  const view = approvalView({
    id: 'a1',
    status: 'pending',
    createdAt: '2026-12-01T00:00:00.000Z',
    runId: 'r1',
    method: 'DELETE',
    host: 'api.github.com',
    path: '/repos/acme/app',
    tool: 'gh_cli',
    toolArgs: { args: [arg, ...Array.from({ length: 200 }, () => 'y'.repeat(1000))] },
  } as unknown as Approval);
  t.notOk(view.args[0]!.includes('ghp_A1b2'), 'no head of the token shows past the cut');
  t.ok(view.args[0]!.length <= 1025, 'one argument stays bounded');
  const shown = view.args.reduce((n, a) => n + a.length, 0);
  t.ok(shown <= ARGS_PREVIEW_TOTAL_CHARS + 100, `all arguments together stay bounded (${shown})`);
  t.match(view.args.at(-1), /more arguments not shown/);
});

t.test('the throttle: back-off doubles to its cap, a quiet window forgives, memory is bounded', async (t) => {
  let now = 0;
  const th = new Throttle({
    ...THROTTLE_LIMITS,
    perAddress: 2,
    overall: 1_000_000,
    windowMs: 1000,
    lockMs: 1000,
    maxLockMs: 4000,
    maxAddresses: 3,
    now: () => now,
  });
  t.same(await th.failure('a'), [], 'one failure: no lock-out');
  t.equal(await th.wait('a'), undefined);
  t.same(await th.failure('a'), [{ scope: 'address', seconds: 1 }], 'the second locks the address out');
  t.match(await th.wait('a'), { scope: 'address' });
  t.equal(await th.wait('b'), undefined, 'another address is not locked');
  const locks: number[] = [];
  for (let i = 0; i < 4; i++) {
    now += ((await th.wait('a'))?.ms ?? 0) + 1;
    locks.push((await th.failure('a'))[0]?.seconds ?? 0);
  }
  t.same(locks, [2, 4, 4, 4], 'each failure after a lock-out locks again, doubling up to the cap');
  now += 4000 + 1000;
  t.same(await th.failure('a'), [], 'after a quiet window a failure counts from zero');
  // the oldest address is forgotten first, so at most maxAddresses are kept
  await th.failure('x');
  await th.failure('x');
  t.ok(await th.wait('x'), 'x locked out');
  for (const a of ['y', 'z', 'w']) await th.failure(a);
  t.equal(await th.wait('x'), undefined, 'x was forgotten once three newer addresses came');
});

t.test(
  'the throttle in a store: two servers over it count the same failures and honour one lock-out',
  async (t) => {
    let now = 0;
    const limits = {
      ...THROTTLE_LIMITS,
      perAddress: 3,
      overall: 5,
      windowMs: 1000,
      lockMs: 1000,
      now: () => now,
    };
    const shared = store(t);
    const a = new Throttle(limits, shared);
    const b = new Throttle(limits, shared);
    t.same(await a.failure('10.0.0.1'), []);
    t.same(await b.failure('10.0.0.1'), []);
    t.same(
      await a.failure('10.0.0.1'),
      [{ scope: 'address', seconds: 1 }],
      'the third failure, on either server, locks',
    );
    t.match(await b.wait('10.0.0.1'), { scope: 'address' }, 'the other server refuses the address too');
    t.equal(await b.wait('10.0.0.2'), undefined);
    t.same(await b.failure('10.0.0.2'), []);
    t.same(await a.failure('10.0.0.3'), [{ scope: 'overall', seconds: 1 }], 'five in all lock every address');
    t.match(await b.wait('10.0.0.9'), { scope: 'overall' });
    now += 1000 + 1000;
    t.equal(await a.wait('10.0.0.1'), undefined, 'a quiet window forgives');
    t.same(await b.failure('10.0.0.1'), [], 'and the count starts from zero');
  },
);
