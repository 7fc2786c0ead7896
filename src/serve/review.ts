/**
 * The reviewer page, `/review`: server-rendered HTML with one small inline script (it
 * reloads the page when the pending approvals change, shows times in the reviewer's own
 * time zone and counts down the time a waiting call has left), nothing to build.
 *
 *   GET  /review                          the pending approvals (Reject / Approve…) and the decided ones
 *   POST /review/login   token=…          a reviewer's token → a new session (sessions.ts) and its cookie
 *   POST /review/logout                   ends the session on the server and clears the cookie
 *   GET  /review/approvals/{id}/confirm   the request restated, with the final "Approve and send"
 *   POST /review/approvals/{id}/approve   confirm={id} (from the confirmation page; without it: 303 there)
 *   POST /review/approvals/{id}/reject
 *   GET  /review/state                    {pending: [ids]} for the script
 *
 * Forms are posted from the page itself: a POST must carry an Origin equal to the page's
 * (the cookie is SameSite=Strict too), so another site cannot decide for the reviewer.
 * A refusal on these routes is an HTML page for a browser (reviewErrorPage), JSON otherwise.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServeTokens } from '../config/types.js';
import { BrokerError, brokerError, messageWithoutCode } from '../errors.js';
import type { ToolHost } from '../host/types.js';
import type { Approval, Store } from '../store/types.js';
import { decide } from './api.js';
import { type Caller, signIn } from './auth.js';
import type { Holder } from './hold.js';
import { REVIEW_COOKIE, type ReviewSessions } from './sessions.js';
import type { Throttle } from './throttle.js';
import { type ApprovalView, approvalView, argsLine, statusText } from './view.js';
import { errorHeaders, ServeRefusal, send, sendJson, wireError } from './wire.js';

export interface ReviewContext {
  host: ToolHost;
  store: Store;
  holder: Holder;
  tokens: ServeTokens;
  /** the server's count of wrong tokens (sign-ins count with the API's and /mcp's) */
  throttle: Throttle;
  /** the server's review sessions */
  sessions: ReviewSessions;
  line: Record<string, unknown>;
  /** `serve.publicUrl`: its origin may post the forms too; https makes the cookie Secure */
  publicUrl?: string;
  /** how long a held call waits for a decision (`serve.approvalTimeoutSeconds`), to show the time left */
  approvalTimeoutMs?: number;
}

const MAX_FORM_BYTES = 16 * 1024;
const APPROVAL_RE = /^\/review\/approvals\/([A-Za-z0-9._:-]{1,128})\/(approve|reject|confirm)$/;

/** The message without the code it starts with: the page shows the code beside it. */
const bare = messageWithoutCode;

const esc = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_FORM_BYTES) {
        req.pause();
        reject(new ServeRefusal(413, `the form is larger than ${MAX_FORM_BYTES} bytes`));
      } else chunks.push(c);
    });
    req.on('end', () => resolve(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', reject);
  });
}

/** A POST from another origin is refused: the page's forms carry the page's own Origin. */
function sameOrigin(req: IncomingMessage, publicUrl: string | undefined): void {
  const origin = req.headers.origin;
  const want = `http://${req.headers.host ?? ''}`;
  // behind a TLS-terminating proxy the page is https (publicUrl), the request reaching us http
  const allowed = [want, want.replace('http:', 'https:'), ...(publicUrl ? [publicUrl] : [])];
  if (origin === undefined || !allowed.includes(origin))
    throw brokerError('SERVE_FORBIDDEN', { origin: true });
}

/**
 * The page's script, on every signed-in page: each `<time datetime>` in the reviewer's own
 * time zone (without script it stays readable UTC), and each `.left[data-expires]` counted down.
 */
const CLOCK_SCRIPT = `const fmt=new Intl.DateTimeFormat(undefined,{dateStyle:'medium',timeStyle:'long'});
for(const t of document.querySelectorAll('time[datetime]')){const d=new Date(t.dateTime);if(!isNaN(d)){t.title=t.textContent;t.textContent=fmt.format(d);}}
const tick=()=>{for(const e of document.querySelectorAll('.left[data-expires]')){const ms=Date.parse(e.dataset.expires)-Date.now();
e.textContent=ms<=0?'no time left: the approval expires now':(ms>=3600000?Math.floor(ms/3600000)+' h ':'')+Math.floor(ms%3600000/60000)+' min '+Math.floor(ms%60000/1000)+' s left';}};
tick();setInterval(tick,1000);`;

function page(title: string, body: string, nonce: string, script = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.4 system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#222}
h1{font-size:1.4rem} h2{font-size:1.1rem;margin-top:2rem}
.approval{border:1px solid #ccc;border-radius:6px;padding:.8rem 1rem;margin:.8rem 0}
.approval.pending{border-color:#c60}
.req{font:600 1rem ui-monospace,monospace;word-break:break-all} .method{color:#b00}
pre{background:#f5f5f5;padding:.5rem;overflow:auto;max-height:12rem;white-space:pre-wrap;word-break:break-all}
.actions{margin-top:.8rem;display:flex;gap:1rem;align-items:center;flex-wrap:wrap} form{display:inline}
button,a.approve{font-size:1rem;padding:.3rem 1rem;border-radius:4px;text-decoration:none;cursor:pointer}
button.reject,button.neutral{background:#fff;color:#222;border:1px solid #888}
button.approve,a.approve{background:#fff;color:#a00;border:2px solid #a00;font-weight:600}
button.approve.final{background:#a00;color:#fff}
.wait{margin:.4rem 0} .wait .left{font-weight:600}
.confirm{border:2px solid #a00;border-radius:6px;padding:1rem}
table{border-collapse:collapse;width:100%} td,th{border-bottom:1px solid #ddd;padding:.3rem;text-align:left;font-size:.9rem}
.error{color:#b00} .none{color:#555}
</style></head><body>${body}${script ? `<script nonce="${nonce}">${script}</script>` : ''}</body></html>`;
}

function sendPage(
  res: ServerResponse,
  status: number,
  html: string,
  nonce: string,
  extra: Record<string, string> = {},
) {
  send(res, status, html, 'text/html; charset=utf-8', {
    'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-${nonce}'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    // same-origin, not no-referrer: with no-referrer a browser posts the forms with `Origin: null`
    'referrer-policy': 'same-origin',
    ...extra,
  });
}

/**
 * A refusal on a review route, answered as an HTML page (its status kept) when the request
 * asks for HTML — every browser's navigation and form post does — and as the API's JSON
 * envelope otherwise. `/review/state` is the page script's JSON and stays JSON.
 */
export function reviewErrorPage(req: IncomingMessage): boolean {
  const path = (req.url ?? '').split('?')[0]!;
  return (
    (path === '/review' || path.startsWith('/review/')) &&
    path !== '/review/state' &&
    /\btext\/html\b/i.test(req.headers.accept ?? '')
  );
}

const NEXT_STEP: Record<string, string> = {
  SERVE_UNAUTHORIZED: '<a href="/review">Sign in</a> again: your review session ended or was never started.',
  SERVE_RATE_LIMITED: 'Wait before signing in again; <a href="/review">back to the sign-in form</a>.',
};

/** The HTML answer of a refusal: its code and message, escaped; the status is the caller's. */
export function sendReviewError(
  res: ServerResponse,
  status: number,
  error: { code: string; message: string; details?: Record<string, unknown> },
): void {
  const nonce = randomBytes(16).toString('base64');
  const after = error.details?.['retryAfterSeconds'];
  const body = `<h1>clibroker review</h1>
<h2 class="status">${status}</h2>
<p class="error"><code class="code">${esc(error.code)}</code>: <span class="message">${esc(bare(error))}</span></p>
${typeof after === 'number' ? `<p class="retry">Try again in ${after} seconds.</p>` : ''}
<p>${NEXT_STEP[error.code] ?? '<a href="/review">Back to the pending approvals</a>.'}</p>`;
  sendPage(
    res,
    status,
    page(`${status} ${error.code} · clibroker review`, body, nonce),
    nonce,
    errorHeaders(error),
  );
}

function loginPage(error?: string): string {
  return `<h1>clibroker review</h1>
${error ? `<p class="error">${esc(error)}</p>` : ''}
<form method="post" action="/review/login">
<label>Reviewer token <input type="password" name="token" autocomplete="off" required></label>
<button type="submit">Sign in</button></form>`;
}

/** An instant for a person: UTC text without script, the reviewer's own time zone with it. */
function timeEl(iso: string, cls = ''): string {
  const d = new Date(iso);
  const utc = Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
  return `<time${cls ? ` class="${cls}"` : ''} datetime="${esc(iso)}">${esc(utc)}</time>`;
}

/** What a pending approval's reviewer needs to know about the agent's call: who asked, how long it waits. */
function waitLine(ctx: ReviewContext, v: ApprovalView): string {
  const asked = `<div class="asked">Asked by run <code class="run">${esc(v.runId)}</code> with the tool <code class="tool">${esc(v.tool)}</code>.</div>`;
  // a call on this server, or on another over the same store (its hold is live), waits
  const held =
    (v.waiting === true || ctx.holder.waiting().includes(v.id)) && ctx.approvalTimeoutMs !== undefined;
  if (!held)
    return `${asked}<div class="wait not-held">No call is waiting for this decision: the agent was told the approval is pending, and an approved request runs when the approval is resumed.</div>`;
  const expires = new Date(Date.parse(v.createdAt) + ctx.approvalTimeoutMs!);
  const mins = Math.max(0, Math.round((expires.getTime() - Date.now()) / 60_000));
  return `${asked}<div class="wait held">The agent's call waits for this decision until ${timeEl(expires.toISOString(), 'expires')} (<span class="left" data-expires="${expires.toISOString()}">about ${mins} min left</span>); then the approval expires and the request is not sent.</div>`;
}

/** The request line: method, host and the whole target. */
function requestLine(v: ApprovalView): string {
  const r = v.request;
  return `<div class="req"><span class="method">${esc(r.method)}</span> <span class="host">${esc(r.host)}</span><span class="path">${esc(r.path)}</span></div>
${r.graphqlOperation ? `<div>GraphQL operation: <code class="operation">${esc(r.graphqlOperation)}</code></div>` : ''}`;
}

/** Body and stdin previews; shown once when the body is the stdin as it was sent (`--data-binary @-`). */
function previews(v: ApprovalView): string {
  const body = v.request.bodyPreview;
  const stdin = v.stdinPreview;
  if (body !== undefined && stdin !== undefined && body === stdin)
    return `<div class="same">Request body — the agent's stdin, sent as it is (${v.stdinBytes} bytes; preview, redacted; shown once):</div><pre class="body">${esc(body)}</pre>`;
  return `${body !== undefined ? `<div>Request body (preview, redacted):</div><pre class="body">${esc(body)}</pre>` : ''}
${stdin !== undefined ? `<div>stdin (${v.stdinBytes} bytes; preview, redacted):</div><pre class="stdin">${esc(stdin)}</pre>` : ''}`;
}

const rejectForm = (id: string): string =>
  `<form method="post" action="/review/approvals/${encodeURIComponent(id)}/reject"><button type="submit" class="reject">Reject</button></form>`;

/** What a person reads of a pending request, on its card and on the confirmation page alike. */
function requestDetails(ctx: ReviewContext, v: ApprovalView, a: Approval): string {
  return `${requestLine(v)}
${waitLine(ctx, v)}
<div>Arguments:</div>
<pre class="args">${esc(argsLine(a))}</pre>
${previews(v)}
<div>Requested ${timeEl(v.createdAt, 'created')} · approval <code>${esc(v.id)}</code></div>`;
}

/** Every field comes from the view, its invisible characters already written as escapes. */
function pendingCard(ctx: ReviewContext, [v, a]: [ApprovalView, Approval]): string {
  return `<div class="approval pending" id="${esc(v.id)}" data-approval="${esc(v.id)}">
${requestDetails(ctx, v, a)}
<div class="actions">${rejectForm(v.id)}
<a class="approve" href="/review/approvals/${encodeURIComponent(v.id)}/confirm">Approve…</a></div>
</div>`;
}

function decidedRow(v: ApprovalView): string {
  const r = v.request;
  return `<tr data-approval="${esc(v.id)}" data-status="${esc(v.status)}"><td class="status">${esc(statusText(v.status))}</td><td>${esc(v.decidedBy ?? '')}</td><td>${v.decidedAt ? timeEl(v.decidedAt) : ''}</td><td><code>${esc(r.method)} ${esc(r.host)}${esc(r.path)}</code></td><td>${esc(v.tool)}</td></tr>`;
}

const errorLine = (e?: { code: string; message: string }): string =>
  e
    ? `<p class="error"><code class="code">${esc(e.code)}</code>: <span class="message">${esc(bare(e))}</span></p>`
    : '';

const signedIn = (caller: Caller): string =>
  `<div>Signed in as <b class="who">${esc(caller.who)}</b>. <form method="post" action="/review/logout"><button type="submit" class="neutral">Sign out</button></form></div>`;

async function reviewPage(
  ctx: ReviewContext,
  caller: Caller,
  nonce: string,
  error?: { code: string; message: string },
): Promise<string> {
  const all = (await ctx.store.listApprovals({ order: 'newest', limit: 200 })).map(
    (a): [ApprovalView, Approval] => [approvalView(a), a],
  );
  const pending = all.filter(([v]) => v.status === 'pending');
  const decided = all
    .filter(([v]) => v.status !== 'pending')
    .slice(0, 50)
    .map(([v]) => v);
  const body = `<h1>clibroker review</h1>
${signedIn(caller)}
${errorLine(error)}
<h2>Pending (${pending.length})</h2>
${pending.length ? pending.map((p) => pendingCard(ctx, p)).join('\n') : '<p class="none pending-none">No pending approvals: nothing waits for a decision.</p>'}
<h2>Decided</h2>
${
  decided.length
    ? `<table><thead><tr><th>status</th><th>by</th><th>when</th><th>request</th><th>tool</th></tr></thead><tbody>
${decided.map(decidedRow).join('\n')}
</tbody></table>`
    : '<p class="none decided-none">No decided approvals yet.</p>'
}`;
  const ids = JSON.stringify(pending.map(([v]) => v.id));
  const script = `${CLOCK_SCRIPT}
const shown=${ids.replace(/</g, '\\u003c')};
setInterval(async()=>{try{const r=await fetch('/review/state',{credentials:'same-origin'});if(r.status===401)location.reload();if(!r.ok)return;
const s=await r.json();if(JSON.stringify(s.pending)!==JSON.stringify(shown))location.reload();}catch{}},2000);`;
  return page('clibroker review', body, nonce, script);
}

/** The last step before an approval is sent: the request restated, "Approve and send", or Reject. */
async function confirmPage(ctx: ReviewContext, caller: Caller, id: string, nonce: string): Promise<string> {
  const a = await ctx.store.getApproval(id);
  if (!a) throw brokerError('APPROVAL_NOT_FOUND', { id }, { details: { approvalId: id } });
  const v = approvalView(a);
  if (v.status !== 'pending')
    throw brokerError(
      'APPROVAL_NOT_PENDING',
      { id: v.id, status: statusText(v.status), to: 'approve' },
      { details: { approvalId: id, status: v.status } },
    );
  const body = `<h1>clibroker review</h1>
${signedIn(caller)}
<div class="confirm approval" data-approval="${esc(v.id)}">
<h2>Approve and send this request?</h2>
<p>Approving lets the agent's command send this one request, as it is shown here:</p>
${requestDetails(ctx, v, a)}
<div class="actions">${rejectForm(v.id)}
<form method="post" action="/review/approvals/${encodeURIComponent(v.id)}/approve"><input type="hidden" name="confirm" value="${esc(v.id)}"><button type="submit" class="approve final">Approve and send ${esc(v.request.method)} ${esc(v.request.host)}${esc(v.request.path)}</button></form>
<a href="/review" class="back">Back to the list</a></div>
</div>`;
  return page('Approve and send? · clibroker review', body, nonce, CLOCK_SCRIPT);
}

export async function review(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  ctx: ReviewContext,
): Promise<void> {
  const nonce = randomBytes(16).toString('base64');
  const path = url.pathname;
  const method = req.method ?? '';
  // the page's background refresh (/review/state) is not the reviewer's activity
  const caller = await ctx.sessions.caller(req.headers.cookie, ctx.tokens, path !== '/review/state');
  const secure = ctx.publicUrl?.startsWith('https:') ? '; Secure' : '';
  if (caller) ctx.line['by'] = caller.who;
  if (path === '/review/login' && method === 'POST') {
    sameOrigin(req, ctx.publicUrl);
    const token = (await readForm(req)).get('token') ?? '';
    // a locked-out address is refused (429) before the token is compared
    const reviewer = await signIn(req, token, ctx.tokens, ctx.throttle, ctx.line);
    if (!reviewer) {
      ctx.line['code'] = 'SERVE_UNAUTHORIZED';
      return sendPage(
        res,
        401,
        page('clibroker review', loginPage('That is not a reviewer token.'), nonce),
        nonce,
      );
    }
    const t = ctx.tokens.reviewers.find(([w]) => w === reviewer.who)![1];
    // a new session each time; the one the browser held until now (if any) is ended
    await ctx.sessions.end(req.headers.cookie, ctx.tokens);
    const value = await ctx.sessions.issue(reviewer.who, t);
    return send(res, 303, '', 'text/plain', {
      location: '/review',
      'set-cookie': `${REVIEW_COOKIE}=${value}; Path=/review; Max-Age=${ctx.sessions.maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`,
    });
  }
  if (path === '/review/logout' && method === 'POST') {
    sameOrigin(req, ctx.publicUrl);
    // ended on the server: the cookie is worth nothing afterwards, even if it was kept
    await ctx.sessions.end(req.headers.cookie, ctx.tokens);
    return send(res, 303, '', 'text/plain', {
      location: '/review',
      'set-cookie': `${REVIEW_COOKIE}=; Path=/review; HttpOnly; SameSite=Strict; Max-Age=0${secure}`,
    });
  }
  if (path === '/review' && method === 'GET') {
    if (!caller) return sendPage(res, 200, page('clibroker review', loginPage(), nonce), nonce);
    return sendPage(res, 200, await reviewPage(ctx, caller, nonce), nonce);
  }
  if (path === '/review/state' && method === 'GET') {
    if (!caller) throw new BrokerError('SERVE_UNAUTHORIZED');
    const pending = await ctx.store.listApprovals({ status: 'pending', order: 'newest', limit: 200 });
    return sendJson(res, 200, { pending: pending.map((a) => a.id) });
  }
  const m = APPROVAL_RE.exec(path);
  if (m && m[2] === 'confirm' && method === 'GET') {
    if (!caller) throw new BrokerError('SERVE_UNAUTHORIZED');
    ctx.line['approvalId'] = m[1];
    return sendPage(res, 200, await confirmPage(ctx, caller, m[1]!, nonce), nonce);
  }
  if (m && m[2] !== 'confirm' && method === 'POST') {
    if (!caller) throw new BrokerError('SERVE_UNAUTHORIZED');
    sameOrigin(req, ctx.publicUrl);
    const form = await readForm(req);
    ctx.line['approvalId'] = m[1];
    // an approval is sent only from its confirmation page, which names the request
    if (m[2] === 'approve' && form.get('confirm') !== m[1])
      return send(res, 303, '', 'text/plain', {
        location: `/review/approvals/${encodeURIComponent(m[1]!)}/confirm`,
      });
    try {
      await decide(ctx, m[1]!, m[2] as 'approve' | 'reject', caller.who);
    } catch (e) {
      const { status, error } = wireError(e);
      ctx.line['code'] = error.code;
      // the approval's status as a person reads it ("approved and sent", not "consumed")
      const was = await ctx.store.getApproval(m[1]!);
      const now =
        was && error.code === 'APPROVAL_NOT_PENDING' ? statusText(approvalView(was).status) : undefined;
      const shown = now ? { code: error.code, message: `${error.message} (it is ${now})` } : error;
      return sendPage(res, status, await reviewPage(ctx, caller, nonce, shown), nonce);
    }
    return send(res, 303, '', 'text/plain', { location: '/review' });
  }
  throw new ServeRefusal(404, 'no such review page');
}
