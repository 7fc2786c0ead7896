/**
 * The session's classify memo seen from the wire: two sessions on one broker never share an
 * answer, and a host changing its override array after open changes nothing in the session.
 */
import t from 'tap';
import type { WireOverride } from '../../src/policy/index.js';
import { brokerFixture } from '../helpers/broker.js';
import { curl } from '../helpers/curl.js';

const SEARCH = 'https://api.example.com/repos/acme/app/issues/search';
const LOOSEN: WireOverride = {
  match: { method: 'POST', pathPattern: '/repos/*/*/issues/search' },
  wireClass: 'read',
};

t.test('a POST one session reads as read is refused in another on the same broker', async (t) => {
  const f = await brokerFixture(t);
  const loose = f.session({ tier: 'read', overrides: [LOOSEN] });
  const strict = f.session({ tier: 'read' });
  for (const [s, want] of [
    [loose, 'read'],
    [strict, 'write'],
    [loose, 'read'],
    [strict, 'write'],
  ] as const) {
    const r = await curl(s, ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-X', 'POST', SEARCH]);
    t.equal(r.stdout, want === 'read' ? '200' : '422', `${want}: ${r.stderr}`);
  }
  t.same(
    f.events.map((e) => e.class),
    ['read', 'write', 'read', 'write'],
  );
});

t.test('the override set is the one the session opened with', async (t) => {
  const f = await brokerFixture(t);
  const overrides: WireOverride[] = [LOOSEN];
  const s = f.session({ tier: 'read', overrides });
  const post = (): Promise<{ stdout: string }> =>
    curl(s, ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-X', 'POST', SEARCH]);
  t.equal((await post()).stdout, '200');
  overrides.length = 0;
  t.equal((await post()).stdout, '200', 'emptying the array after open changes nothing');
  overrides.push({
    match: { method: 'POST', pathPattern: '/repos/*/*/issues/search' },
    wireClass: 'destructive',
  });
  t.equal((await post()).stdout, '200', 'nor does adding to it');
  t.same(s.overrides, [LOOSEN]);
  t.ok(Object.isFrozen(s.overrides) && Object.isFrozen(s.overrides[0]!.match), 'frozen all the way down');
});
