import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t, { type Test } from 'tap';
import { GHE, SEED } from '../helpers/seed.js';
import { serveFixture, TOKENS } from './helpers.js';

// The reviewer page in a real browser: Debian's chromium, headless, driven by puppeteer-core
// (installed by scripts/install-system-deps.sh; nothing is downloaded). An MCP client's
// `gh repo delete acme/app --yes` waits; the page shows the DELETE with its host and path; a
// click on Approve lets the call return the re-run's result, and the vendor sees one DELETE.
// The screenshot is kept under tests/.artifacts/.

t.setTimeout(300_000);
const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = new URL('../.artifacts/', import.meta.url).pathname;

const f = await serveFixture();
t.teardown(async () => {
  await f.stop();
  await f.d.close();
});

t.test('without a browser: sign-in, origin and session checks', async (t) => {
  const page = await fetch(`${f.url}/review`);
  t.equal(page.status, 200);
  const html = await page.text();
  t.match(html, /name="token"/, 'a sign-in form');
  t.match(page.headers.get('content-security-policy') ?? '', /script-src 'nonce-/);
  const login = (token: string, origin?: string) =>
    fetch(`${f.url}/review/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(origin ? { origin } : {}),
      },
      body: new URLSearchParams({ token }).toString(),
    });
  t.equal((await login(TOKENS.executor, f.url)).status, 401, 'an executor token is not a reviewer');
  t.equal((await login(TOKENS.alice)).status, 403, 'no Origin: refused');
  t.equal((await login(TOKENS.alice, 'http://evil.example')).status, 403, 'another origin: refused');
  const ok = await login(TOKENS.alice, f.url);
  t.equal(ok.status, 303);
  const cookie = ok.headers.get('set-cookie') ?? '';
  t.match(cookie, /HttpOnly; SameSite=Strict/);
  t.notOk(cookie.includes(TOKENS.alice), 'the cookie is not the token');
  const session = cookie.split(';')[0]!;
  const signed = await fetch(`${f.url}/review`, { headers: { cookie: session } });
  t.match(await signed.text(), /Signed in as <b class="who">alice<\/b>/);
  const forged = await fetch(`${f.url}/review`, { headers: { cookie: 'clibroker_review=alice.AAAA' } });
  t.match(await forged.text(), /name="token"/, 'a forged session is a sign-in form again');
  const cross = await fetch(`${f.url}/review/approvals/x/approve`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: session, origin: 'http://evil.example' },
  });
  t.equal(cross.status, 403, 'a decision posted from elsewhere is refused');
});

t.test('stdin kept with an approval is shown bounded and redacted', async (t) => {
  const secret = SEED.ghToken;
  const call = f.call('POST', '/v1/tools/execute', TOKENS.executor, {
    toolId: 'gh_cli',
    input: {
      args: ['api', '-X', 'DELETE', 'repos/acme/app', '--input', '-'],
      stdin: `{"note": "${secret}", "pad": "${'p'.repeat(10_000)}"}`,
    },
    cliTier: 'write',
  });
  const [a] = await f.pending();
  t.ok(a.stdinPreview.length < 2100, 'bounded');
  t.equal(a.stdinBytes, Buffer.byteLength(`{"note": "${secret}", "pad": "${'p'.repeat(10_000)}"}`));
  t.notOk(JSON.stringify(a).includes(secret), 'no secret in the approval as the API shows it');
  const login = await fetch(`${f.url}/review/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: f.url },
    body: `token=${TOKENS.bob}`,
  });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const html = await (await fetch(`${f.url}/review`, { headers: { cookie } })).text();
  t.match(html, /class="stdin"/);
  t.notOk(html.includes(secret), 'no secret on the page');
  await fetch(`${f.url}/review/approvals/${a.id}/reject`, {
    method: 'POST',
    headers: { cookie, origin: f.url },
  });
  t.match((await call).json.error, {
    code: 'EXEC_ACTION_CONFIRMATION_DECLINED',
    details: { decidedBy: 'bob' },
  });
});

/** Headless chromium for one test, closed with it; undefined (and said) when it is missing. */
async function chromium(t: Test) {
  if (!existsSync(CHROMIUM)) {
    const why = `${CHROMIUM} is not installed (scripts/install-system-deps.sh installs it)`;
    if (process.env['CI'] === '1') t.fail(`CI needs the browser test: ${why}`);
    else {
      console.log(`# skipping the browser test: ${why}`);
      t.pass(`skipped: ${why}`);
    }
    return undefined;
  }
  const { default: puppeteer } = await import('puppeteer-core');
  const profile = mkdtempSync(join(tmpdir(), 'clibroker-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: profile,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  t.teardown(async () => {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  });
  return browser;
}

t.test('in chromium: the DELETE waits, a reviewer approves it on the page', async (t) => {
  const browser = await chromium(t);
  if (!browser) return;
  const client = new Client({ name: 'clibroker-review-test', version: '0.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${f.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${TOKENS.mcp}` } },
    }),
  );
  t.teardown(() => client.close());
  const before = f.deletes();
  const call = client.callTool(
    { name: 'gh_cli', arguments: { args: ['repo', 'delete', 'acme/app', '--yes'] } },
    undefined,
    { timeout: 120_000 },
  );
  const [a] = await f.pending();
  t.equal(f.deletes(), before, 'nothing deleted while it waits');

  const page = await browser.newPage();
  await page.setViewport({ width: 1100, height: 900 });
  await page.goto(`${f.url}/review`);
  await page.type('input[name=token]', TOKENS.alice);
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
  const card = `.approval[data-approval="${a.id}"]`;
  await page.waitForSelector(card);
  const shown = await page.$eval(card, (el) => ({
    method: el.querySelector('.method')?.textContent,
    host: el.querySelector('.host')?.textContent,
    path: el.querySelector('.path')?.textContent,
    tool: el.querySelector('.tool')?.textContent,
    args: el.querySelector('.args')?.textContent,
  }));
  t.same(shown, {
    method: 'DELETE',
    host: GHE,
    path: '/api/v3/repos/acme/app',
    tool: 'gh_cli',
    args: JSON.stringify(['repo', 'delete', 'acme/app', '--yes']),
  });
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, 'review-pending.png'), fullPage: true });
  await Promise.all([page.waitForNavigation(), page.click(`${card} button.approve`)]);

  const r = await call;
  t.notOk(r.isError, JSON.stringify(r));
  t.match(r.structuredContent, { exitCode: 0, cliTier: 'write' });
  t.equal(f.deletes(), before + 1, 'the vendor saw the DELETE exactly once');
  await page.reload();
  const row = await page.$eval(`tr[data-approval="${a.id}"]`, (el) => el.textContent ?? '');
  t.match(row, /alice/, 'decided approvals show who');
  t.match(row, /consumed|approved/);
  await page.screenshot({ path: join(ARTIFACTS, 'review-decided.png'), fullPage: true });
  t.ok(existsSync(join(ARTIFACTS, 'review-pending.png')), 'the screenshot is kept');
});

t.test(
  'in chromium: the card shows the whole target, redacted, and invisible characters as escapes',
  async (t) => {
    const browser = await chromium(t);
    if (!browser) return;
    const RLO = '\u202E';
    const pasted = 'ghp_PastedIntoTheQuery000000000000000042';
    const body = `{"note":"${RLO}exe.txt"}`;
    const call = f.call('POST', '/v1/tools/execute', TOKENS.executor, {
      toolId: 'gh_cli',
      input: {
        args: [
          'api',
          '-X',
          'DELETE',
          `repos/acme/app/issues/comments/7?purge=all&token=${pasted}`,
          '--input',
          '-',
          '--jq',
          `.x${RLO}`,
        ],
        stdin: body,
      },
      cliTier: 'write',
    });
    const [a] = await f.pending();
    const page = await browser.newPage();
    await page.setViewport({ width: 1100, height: 900 });
    await page.goto(`${f.url}/review`);
    await page.type('input[name=token]', TOKENS.bob);
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
    const card = `.approval[data-approval="${a.id}"]`;
    await page.waitForSelector(card);
    const shown = await page.$eval(card, (el) => ({
      path: el.querySelector('.path')?.textContent,
      args: el.querySelector('.args')?.textContent,
      body: el.querySelector('.body')?.textContent,
      stdin: el.querySelector('.stdin')?.textContent,
      all: el.textContent ?? '',
    }));
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'review-whole-target.png'), fullPage: true });
    t.equal(
      shown.path,
      '/api/v3/repos/acme/app/issues/comments/7?purge=all&token={redacted}',
      'path and query',
    );
    t.equal(
      shown.args,
      JSON.stringify([
        'api',
        '-X',
        'DELETE',
        'repos/acme/app/issues/comments/7?purge=all&token=[REDACTED]',
        '--input',
        '-',
        '--jq',
        '.x',
      ]).replace('.x"', '.x\\u202E"'),
      'the arguments, the override as an escape',
    );
    t.equal(shown.body, '{"note":"\\u202Eexe.txt"}', 'the body preview');
    t.equal(shown.stdin, '{"note":"\\u202Eexe.txt"}', 'the stdin preview');
    t.notOk(shown.all.includes(RLO), 'no override anywhere on the card');
    t.notOk(shown.all.includes(pasted), 'no pasted token on the card');
    t.equal((await f.call('POST', `/v1/approvals/${a.id}/reject`, TOKENS.bob)).status, 200);
    t.match((await call).json.error, { code: 'EXEC_ACTION_CONFIRMATION_DECLINED' });
  },
);

t.test(
  'in chromium: the cookie lasts the absolute lifetime; sign-out, here or elsewhere, ends the session',
  async (t) => {
    const browser = await chromium(t);
    if (!browser) return;
    const page = await browser.newPage();
    const signInOnPage = async () => {
      await page.goto(`${f.url}/review`);
      await page.type('input[name=token]', TOKENS.alice);
      await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
      await page.waitForSelector('b.who');
      const c = (await page.cookies()).find((x) => x.name === 'clibroker_review');
      if (!c) throw new Error('no session cookie');
      return c;
    };
    const first = await signInOnPage();
    t.match(
      first,
      { httpOnly: true, sameSite: 'Strict', path: '/review', session: false },
      'HttpOnly, SameSite=Strict, kept with an expiry',
    );
    t.ok(first.expires > Date.now() / 1000, 'the expiry is ahead');
    // the session is ended elsewhere (the same cookie, signed out from another client): the open
    // page's background refresh is refused, and the page shows the sign-in form again
    const out = await fetch(`${f.url}/review/logout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: `clibroker_review=${first.value}`, origin: f.url },
    });
    t.equal(out.status, 303);
    await page.waitForSelector('input[name=token]', { timeout: 15_000 });
    t.pass('the open page went back to the sign-in form');

    const second = await signInOnPage();
    t.not(second.value, first.value, 'a new session at the next sign-in');
    await Promise.all([page.waitForNavigation(), page.click('form[action="/review/logout"] button')]);
    await page.waitForSelector('input[name=token]');
    t.notOk(
      (await page.cookies()).some((x) => x.name === 'clibroker_review'),
      'Sign out drops the cookie from the browser',
    );
    const replay = await fetch(`${f.url}/review`, {
      headers: { cookie: `clibroker_review=${second.value}` },
    });
    t.match(await replay.text(), /name="token"/, 'the cookie kept from before Sign out is refused');
  },
);
