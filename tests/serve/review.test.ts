import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import { GHE, SEED } from '../helpers/seed.js';
import { chromium } from '../helpers/chromium.js';
import { serveFixture, TOKENS } from './helpers.js';

// The reviewer page in a real browser: Debian's chromium, headless, driven by puppeteer-core
// (installed by scripts/install-system-deps.sh; nothing is downloaded). An MCP client's
// `gh repo delete acme/app --yes` waits; the page shows the DELETE with its host and path; a
// click on Approve lets the call return the re-run's result, and the vendor sees one DELETE.
// The screenshot is kept under tests/.artifacts/.

t.setTimeout(300_000);
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

/** A session cookie (`name=value`) for a reviewer, signed in over plain HTTP. */
async function cookieFor(token: string): Promise<string> {
  const login = await fetch(`${f.url}/review/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: f.url },
    body: new URLSearchParams({ token }).toString(),
  });
  return (login.headers.get('set-cookie') ?? '').split(';')[0]!;
}

t.test(
  'in chromium: with nothing pending or decided, the page says so instead of empty tables',
  async (t) => {
    const browser = await chromium(t);
    if (!browser) return;
    t.same((await f.call('GET', '/v1/approvals', TOKENS.alice)).json.result.approvals, [], 'a fresh store');
    const page = await browser.newPage();
    await page.goto(`${f.url}/review`);
    await page.type('input[name=token]', TOKENS.alice);
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
    await page.waitForSelector('b.who');
    const shown = await page.$eval('body', (el) => ({
      tables: el.querySelectorAll('table').length,
      pending: el.querySelector('.pending-none')?.textContent,
      decided: el.querySelector('.decided-none')?.textContent,
    }));
    t.same(shown, {
      tables: 0,
      pending: 'No pending approvals: nothing waits for a decision.',
      decided: 'No decided approvals yet.',
    });
  },
);

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

  // who asked, and how long the agent's call keeps waiting (serve.approvalTimeoutSeconds: 600)
  const waiting = await page.$eval(card, (el) => ({
    run: el.querySelector('.run')?.textContent,
    expires: el.querySelector('.wait.held time.expires')?.getAttribute('datetime'),
    left: el.querySelector('.wait.held .left')?.textContent,
  }));
  t.equal(waiting.run, a.runId, 'the run that asked');
  t.equal(
    waiting.expires,
    new Date(Date.parse(a.createdAt) + 600_000).toISOString(),
    'the call waits until the approval timeout after the request',
  );
  t.match(waiting.left, /^(\d+ h )?\d+ min \d+ s left$/, 'the time left, counted down in the browser');

  // Reject is the plain default and comes first; Approve is marked as the dangerous one
  const buttons = await page.$eval(card, (el) => {
    const [reject, approve] = ['.reject', '.approve'].map((s) => {
      const b = el.querySelector(s);
      if (!b) return undefined;
      const c = el.ownerDocument.defaultView!.getComputedStyle(b);
      return { text: b.textContent, color: c.color, border: c.borderTopColor, weight: c.fontWeight };
    });
    const order = [...el.querySelectorAll('.reject, .approve')].map((b) => b.className);
    return { reject, approve, order };
  });
  t.same(buttons.order, ['reject', 'approve'], 'Reject first');
  t.equal(buttons.approve?.text, 'Approve…', 'Approve says it leads to a further step');
  t.not(buttons.approve?.color, buttons.reject?.color, 'Approve is not styled as Reject');
  t.equal(buttons.approve?.color, 'rgb(170, 0, 0)', 'Approve is marked in red');

  // Approve leads to a confirmation naming the request; nothing is decided yet
  await Promise.all([page.waitForNavigation(), page.click(`${card} .approve`)]);
  t.equal(new URL(page.url()).pathname, `/review/approvals/${a.id}/confirm`);
  const confirm = await page.$eval('.confirm', (el) => ({
    method: el.querySelector('.method')?.textContent,
    host: el.querySelector('.host')?.textContent,
    path: el.querySelector('.path')?.textContent,
    run: el.querySelector('.run')?.textContent,
    final: el.querySelector('button.approve.final')?.textContent,
  }));
  t.same(confirm, {
    method: 'DELETE',
    host: GHE,
    path: '/api/v3/repos/acme/app',
    run: a.runId,
    final: `Approve and send DELETE ${GHE}/api/v3/repos/acme/app`,
  });
  t.equal((await f.call('GET', `/v1/approvals/${a.id}`, TOKENS.alice)).json.result.status, 'pending');
  t.equal(f.deletes(), before, 'nothing sent on the way to the confirmation');
  await page.screenshot({ path: join(ARTIFACTS, 'review-confirm.png'), fullPage: true });
  await Promise.all([page.waitForNavigation(), page.click('.confirm button.approve.final')]);

  const r = await call;
  t.notOk(r.isError, JSON.stringify(r));
  t.match(r.structuredContent, { exitCode: 0, cliTier: 'write' });
  t.equal(f.deletes(), before + 1, 'the vendor saw the DELETE exactly once');
  await page.reload();
  const row = await page.$eval(`tr[data-approval="${a.id}"]`, (el) => el.textContent ?? '');
  t.match(row, /alice/, 'decided approvals show who');
  t.match(row, /approved and sent/, 'the status in words');
  t.notMatch(row, /consumed/);
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
      same: el.querySelector('.same')?.textContent,
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
    t.equal(shown.stdin, undefined, 'the stdin is the body: not shown a second time');
    t.match(
      shown.same,
      /the agent's stdin, sent as it is \(\d+ bytes; .*shown once\)/,
      'and the page says so',
    );
    t.equal(shown.all.split('exe.txt').length - 1, 1, 'the text is on the card once');
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

t.test(
  "in chromium: times in the reviewer's own time zone; a request no call waits for; one click never approves",
  async (t) => {
    const browser = await chromium(t);
    if (!browser) return;
    // asked of the host directly: the approval is pending, but no call of this server waits for it
    const asked = await f.host
      .runTool(
        'gh_cli',
        { args: ['repo', 'delete', 'acme/app', '--yes'] },
        { cliTier: 'write', context: 'agent-step' },
      )
      .then(
        () => undefined,
        (e: { code?: string; details?: { approvalId?: string } }) => e,
      );
    t.equal(asked?.code, 'CLI_APPROVAL_PENDING');
    const id = String(asked?.details?.approvalId);
    const a = (await f.call('GET', `/v1/approvals/${id}`, TOKENS.alice)).json.result;
    const cookie = await cookieFor(TOKENS.alice);

    // without script the times are readable UTC, in <time datetime>
    const html = await (await fetch(`${f.url}/review`, { headers: { cookie } })).text();
    const utc = `${new Date(a.createdAt).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
    t.ok(
      html.includes(`<time class="created" datetime="${a.createdAt}">${utc}</time>`),
      'UTC without script',
    );

    // a POST to approve that does not come from the confirmation page only leads to it
    const oneClick = await fetch(`${f.url}/review/approvals/${id}/approve`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin: f.url },
    });
    t.equal(oneClick.status, 303);
    t.equal(oneClick.headers.get('location'), `/review/approvals/${id}/confirm`);
    t.equal(
      (await f.call('GET', `/v1/approvals/${id}`, TOKENS.alice)).json.result.status,
      'pending',
      'not approved',
    );

    const page = await browser.newPage();
    await page.emulateTimezone('Asia/Kolkata');
    await page.setCookie({ name: 'clibroker_review', value: cookie.split('=')[1]!, url: f.url });
    await page.goto(`${f.url}/review`);
    const card = `.approval[data-approval="${id}"]`;
    await page.waitForSelector(card);
    const shown = await page.$eval(card, (el) => ({
      time: el.querySelector('time.created')?.textContent,
      title: el.querySelector('time.created')?.getAttribute('title'),
      notHeld: el.querySelector('.wait.not-held')?.textContent,
      held: el.querySelector('.wait.held'),
      run: el.querySelector('.run')?.textContent,
      tool: el.querySelector('.tool')?.textContent,
    }));
    t.match(shown.time, /GMT\+5:30/, "the reviewer's own time zone");
    t.notMatch(shown.time, /UTC/);
    t.equal(shown.title, utc, 'the UTC text kept as the title');
    t.match(shown.notHeld, /No call is waiting for this decision/);
    t.equal(shown.held, null, 'no time left shown for a call that does not wait');
    t.equal(shown.run, a.runId);
    t.equal(shown.tool, 'gh_cli');
    await page.screenshot({ path: join(ARTIFACTS, 'review-not-held.png'), fullPage: true });

    // the confirmation page works without script: its form posts the approval
    const confirm = await fetch(`${f.url}/review/approvals/${id}/confirm`, { headers: { cookie } });
    t.equal(confirm.status, 200);
    const form = await confirm.text();
    t.match(form, new RegExp(`<input type="hidden" name="confirm" value="${id}">`));
    const sent = await fetch(`${f.url}/review/approvals/${id}/approve`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin: f.url, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ confirm: id }).toString(),
    });
    t.equal(sent.status, 303);
    t.equal((await f.call('GET', `/v1/approvals/${id}`, TOKENS.alice)).json.result.status, 'approved');
    const later = await f.host.resume(id);
    t.equal(later.exitCode, 0, 'resumed once approved');

    // deciding it again is refused on the page, the status in words
    const again = await fetch(`${f.url}/review/approvals/${id}/approve`, {
      method: 'POST',
      headers: {
        cookie,
        origin: f.url,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'text/html',
      },
      body: new URLSearchParams({ confirm: id }).toString(),
    });
    t.equal(again.status, 409);
    t.match(again.headers.get('content-type'), /^text\/html/);
    const refused = await again.text();
    t.match(refused, /<code class="code">APPROVAL_NOT_PENDING<\/code>/);
    t.match(refused, /\(it is approved and sent\)/);
    t.notMatch(refused.replace(/data-status="[a-z]+"/g, ''), /consumed/, 'nowhere a person reads it');
    t.equal(refused.split('APPROVAL_NOT_PENDING').length - 1, 1, 'the code is shown once');
    const gone = await fetch(`${f.url}/review/approvals/${id}/confirm`, {
      headers: { cookie, accept: 'text/html' },
    });
    t.equal(gone.status, 409, 'no confirmation for a decided approval');
    t.match(
      await gone.text(),
      /approval [^ ]+ is approved and sent; only a pending approval can be approved/,
    );
  },
);
