import t from 'tap';
import { serveFromConfig, TOKENS } from './helpers.js';

// serve.reviewSessionMaxHours and serve.reviewSessionIdleMinutes: the operator's lifetimes reach
// the review sessions of a server started as `clibroker serve` starts (the cookie's Max-Age is
// the absolute lifetime), and the loader's defaults hold when they are absent.

t.setTimeout(300_000);

/** Sign alice in at /review/login; the Max-Age of the session cookie the server sets. */
async function maxAge(url: string): Promise<number | undefined> {
  const r = await fetch(`${url}/review/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url },
    body: new URLSearchParams({ token: TOKENS.alice }).toString(),
  });
  const cookie = r.headers.get('set-cookie') ?? '';
  const m = /Max-Age=(\d+)/i.exec(cookie);
  return m ? Number(m[1]) : undefined;
}

t.test('the configured absolute lifetime is the cookie’s Max-Age', async (t) => {
  const s = await serveFromConfig((dir) => ({
    reviewers: { alice: dir.secret('alice', TOKENS.alice) },
    reviewSessionMaxHours: 2,
    reviewSessionIdleMinutes: 5,
  }));
  t.teardown(() => s.stop());
  t.equal(await maxAge(s.url), 2 * 3600);
});

t.test('without the fields: 12 hours', async (t) => {
  const s = await serveFromConfig((dir) => ({ reviewers: { alice: dir.secret('alice', TOKENS.alice) } }));
  t.teardown(() => s.stop());
  t.equal(await maxAge(s.url), 12 * 3600);
});
