import { request } from 'node:http';
import t from 'tap';
import { chromium } from '../helpers/chromium.js';
import { serveFixture, TOKENS } from './helpers.js';

// The review routes' refusals, as a browser gets them: an HTML page with the code and the
// message (escaped), the status kept. A client that does not ask for HTML keeps the JSON
// envelope. Its own server: the sign-in lock-out here would refuse the other files' sign-ins.

t.setTimeout(180_000);
const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

const f = await serveFixture();
t.teardown(async () => {
  await f.stop();
  await f.d.close();
});

const signIn = (token: string, headers: Record<string, string> = {}) =>
  fetch(`${f.url}/review/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: f.url, ...headers },
    body: new URLSearchParams({ token }).toString(),
  });

t.test('a page that does not exist: 404 as HTML, JSON for a client that does not ask for HTML', async (t) => {
  const r = await fetch(`${f.url}/review/nowhere`, { headers: HTML });
  t.equal(r.status, 404);
  t.match(r.headers.get('content-type'), /^text\/html; charset=utf-8/);
  t.match(r.headers.get('content-security-policy'), /default-src 'none'/);
  const html = await r.text();
  t.match(
    html,
    /<code class="code">SERVE_PROTOCOL_ERROR<\/code>: <span class="message">[^<]*no such review page/,
  );
  const json = await fetch(`${f.url}/review/nowhere`);
  t.equal(json.status, 404);
  t.match(await json.json(), { ok: false, error: { code: 'SERVE_PROTOCOL_ERROR' } });
  const state = await fetch(`${f.url}/review/state`, { headers: HTML });
  t.equal(state.status, 401, "the page script's /review/state stays JSON");
  t.match(state.headers.get('content-type'), /json/);
});

t.test('a decision refused: another origin (403), an ended session (401)', async (t) => {
  const login = await signIn(TOKENS.alice);
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const cross = await fetch(`${f.url}/review/approvals/x/reject`, {
    method: 'POST',
    redirect: 'manual',
    headers: { ...HTML, cookie, origin: 'http://evil.example' },
  });
  t.equal(cross.status, 403);
  t.match(cross.headers.get('content-type'), /^text\/html/);
  t.match(await cross.text(), /<code class="code">SERVE_FORBIDDEN<\/code>/);
  const out = await fetch(`${f.url}/review/logout`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, origin: f.url },
  });
  t.equal(out.status, 303);
  const ended = await fetch(`${f.url}/review/approvals/x/reject`, {
    method: 'POST',
    redirect: 'manual',
    headers: { ...HTML, cookie, origin: f.url },
  });
  t.equal(ended.status, 401);
  t.match(ended.headers.get('content-type'), /^text\/html/);
  const html = await ended.text();
  t.match(html, /<code class="code">SERVE_UNAUTHORIZED<\/code>/);
  t.match(html, /<a href="\/review">Sign in<\/a> again/, 'the way back to the sign-in form');
  const confirm = await fetch(`${f.url}/review/approvals/x/confirm`, { headers: { ...HTML, cookie } });
  t.equal(confirm.status, 401, 'the confirmation page too');
  t.match(confirm.headers.get('content-type'), /^text\/html/);
});

t.test('what the request sent is escaped on the page', async (t) => {
  // a foreign Host header is named in the message (421)
  const { status, type, body } = await new Promise<{ status: number; type: string; body: string }>(
    (resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: f.server.port, path: '/review', headers: { ...HTML, host: '<i>x</i>' } },
        (res) => {
          let b = '';
          res.on('data', (c: Buffer) => {
            b += c.toString();
          });
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: b }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    },
  );
  t.equal(status, 421);
  t.match(type, /^text\/html/);
  t.match(body, /&lt;i&gt;x&lt;\/i&gt;/, 'escaped');
  t.notMatch(body, /<i>x<\/i>/, 'never as markup');
});

t.test('a locked-out sign-in: 429 as HTML with Retry-After', async (t) => {
  for (let i = 0; i < 10; i++) t.equal((await signIn(`wrong-${i}`)).status, 401);
  const r = await signIn(TOKENS.alice, HTML);
  t.equal(r.status, 429);
  t.match(r.headers.get('content-type'), /^text\/html/);
  t.match(r.headers.get('retry-after'), /^\d+$/);
  const html = await r.text();
  t.match(html, /<code class="code">SERVE_RATE_LIMITED<\/code>/);
  t.match(html, /<p class="retry">Try again in \d+ seconds\.<\/p>/);

  // and in a browser: the sign-in form's answer is that page
  const browser = await chromium(t);
  if (!browser) return;
  const page = await browser.newPage();
  await page.goto(`${f.url}/review`);
  await page.type('input[name=token]', TOKENS.alice);
  const [answer] = await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
  t.equal(answer?.status(), 429);
  const shown = await page.$eval('body', (el) => ({
    code: el.querySelector('.code')?.textContent,
    message: el.querySelector('.message')?.textContent,
  }));
  t.equal(shown.code, 'SERVE_RATE_LIMITED');
  t.match(shown.message, /\S/, 'with its message');
});
