/**
 * The reviewer page, `/review`: server-rendered HTML with one small inline script (it
 * reloads the page when the pending approvals change), nothing to build.
 *
 *   GET  /review                          the pending approvals (Approve / Reject) and the decided ones
 *   POST /review/login   token=…          a reviewer's token → a new session (sessions.ts) and its cookie
 *   POST /review/logout                   ends the session on the server and clears the cookie
 *   POST /review/approvals/{id}/approve|reject
 *   GET  /review/state                    {pending: [ids]} for the script
 *
 * Forms are posted from the page itself: a POST must carry an Origin equal to the page's
 * (the cookie is SameSite=Strict too), so another site cannot decide for the reviewer.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServeTokens } from '../config/types.js';
import { BrokerError, brokerError } from '../errors.js';
import type { ToolHost } from '../host/types.js';
import type { Approval, Store } from '../store/types.js';
import { decide } from './api.js';
import { type Caller, signIn } from './auth.js';
import type { Holder } from './hold.js';
import { REVIEW_COOKIE, type ReviewSessions } from './sessions.js';
import type { Throttle } from './throttle.js';
import { type ApprovalView, approvalView, argsLine } from './view.js';
import { ServeRefusal, send, sendJson, wireError } from './wire.js';

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
}

const MAX_FORM_BYTES = 16 * 1024;
const DECIDE_RE = /^\/review\/approvals\/([A-Za-z0-9._:-]{1,128})\/(approve|reject)$/;

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

function page(title: string, body: string, nonce: string, script = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.4 system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#222}
h1{font-size:1.4rem} h2{font-size:1.1rem;margin-top:2rem}
.approval{border:1px solid #ccc;border-radius:6px;padding:.8rem 1rem;margin:.8rem 0}
.approval.pending{border-color:#c60}
.req{font:600 1rem ui-monospace,monospace} .method{color:#b00}
pre{background:#f5f5f5;padding:.5rem;overflow:auto;max-height:12rem;white-space:pre-wrap;word-break:break-all}
button{font-size:1rem;padding:.3rem 1rem;margin-right:.5rem} form{display:inline}
table{border-collapse:collapse;width:100%} td,th{border-bottom:1px solid #ddd;padding:.3rem;text-align:left;font-size:.9rem}
.error{color:#b00}
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

function loginPage(error?: string): string {
  return `<h1>clibroker review</h1>
${error ? `<p class="error">${esc(error)}</p>` : ''}
<form method="post" action="/review/login">
<label>Reviewer token <input type="password" name="token" autocomplete="off" required></label>
<button type="submit">Sign in</button></form>`;
}

/** Every field comes from the view, its invisible characters already written as escapes. */
function pendingCard([v, a]: [ApprovalView, Approval]): string {
  const r = v.request;
  return `<div class="approval pending" id="${esc(v.id)}" data-approval="${esc(v.id)}">
<div class="req"><span class="method">${esc(r.method)}</span> <span class="host">${esc(r.host)}</span><span class="path">${esc(r.path)}</span></div>
${r.graphqlOperation ? `<div>GraphQL operation: <code class="operation">${esc(r.graphqlOperation)}</code></div>` : ''}
<div>Tool <code class="tool">${esc(v.tool)}</code>, arguments:</div>
<pre class="args">${esc(argsLine(a))}</pre>
${r.bodyPreview !== undefined ? `<div>Request body (preview, redacted):</div><pre class="body">${esc(r.bodyPreview)}</pre>` : ''}
${v.stdinPreview !== undefined ? `<div>stdin (${v.stdinBytes} bytes; preview, redacted):</div><pre class="stdin">${esc(v.stdinPreview)}</pre>` : ''}
<div>Requested ${esc(v.createdAt)} · approval <code>${esc(v.id)}</code></div>
<form method="post" action="/review/approvals/${encodeURIComponent(v.id)}/approve"><button type="submit" class="approve">Approve</button></form>
<form method="post" action="/review/approvals/${encodeURIComponent(v.id)}/reject"><button type="submit" class="reject">Reject</button></form>
</div>`;
}

function decidedRow(v: ApprovalView): string {
  const r = v.request;
  return `<tr data-approval="${esc(v.id)}"><td>${esc(v.status)}</td><td>${esc(v.decidedBy ?? '')}</td><td>${esc(v.decidedAt ?? '')}</td><td><code>${esc(r.method)} ${esc(r.host)}${esc(r.path)}</code></td><td>${esc(v.tool)}</td></tr>`;
}

async function reviewPage(
  ctx: ReviewContext,
  caller: Caller,
  nonce: string,
  error?: string,
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
<div>Signed in as <b class="who">${esc(caller.who)}</b>. <form method="post" action="/review/logout"><button type="submit">Sign out</button></form></div>
${error ? `<p class="error">${esc(error)}</p>` : ''}
<h2>Pending (${pending.length})</h2>
${pending.length ? pending.map(pendingCard).join('\n') : '<p class="none">Nothing waits for a decision.</p>'}
<h2>Decided</h2>
<table><thead><tr><th>status</th><th>by</th><th>when</th><th>request</th><th>tool</th></tr></thead><tbody>
${decided.map(decidedRow).join('\n')}
</tbody></table>`;
  const ids = JSON.stringify(pending.map(([v]) => v.id));
  const script = `const shown=${ids.replace(/</g, '\\u003c')};
setInterval(async()=>{try{const r=await fetch('/review/state',{credentials:'same-origin'});if(r.status===401)location.reload();if(!r.ok)return;
const s=await r.json();if(JSON.stringify(s.pending)!==JSON.stringify(shown))location.reload();}catch{}},2000);`;
  return page('clibroker review', body, nonce, script);
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
  const caller = ctx.sessions.caller(req.headers.cookie, ctx.tokens, path !== '/review/state');
  const secure = ctx.publicUrl?.startsWith('https:') ? '; Secure' : '';
  if (caller) ctx.line['by'] = caller.who;
  if (path === '/review/login' && method === 'POST') {
    sameOrigin(req, ctx.publicUrl);
    const token = (await readForm(req)).get('token') ?? '';
    // a locked-out address is refused (429) before the token is compared
    const reviewer = signIn(req, token, ctx.tokens, ctx.throttle, ctx.line);
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
    ctx.sessions.end(req.headers.cookie, ctx.tokens);
    const value = ctx.sessions.issue(reviewer.who, t);
    return send(res, 303, '', 'text/plain', {
      location: '/review',
      'set-cookie': `${REVIEW_COOKIE}=${value}; Path=/review; Max-Age=${ctx.sessions.maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`,
    });
  }
  if (path === '/review/logout' && method === 'POST') {
    sameOrigin(req, ctx.publicUrl);
    // ended on the server: the cookie is worth nothing afterwards, even if it was kept
    ctx.sessions.end(req.headers.cookie, ctx.tokens);
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
  const m = DECIDE_RE.exec(path);
  if (m && method === 'POST') {
    if (!caller) throw new BrokerError('SERVE_UNAUTHORIZED');
    sameOrigin(req, ctx.publicUrl);
    await readForm(req);
    ctx.line['approvalId'] = m[1];
    try {
      await decide(ctx, m[1]!, m[2] as 'approve' | 'reject', caller.who);
    } catch (e) {
      const { status, error } = wireError(e);
      ctx.line['code'] = error.code;
      return sendPage(res, status, await reviewPage(ctx, caller, nonce, error.message), nonce);
    }
    return send(res, 303, '', 'text/plain', { location: '/review' });
  }
  throw new ServeRefusal(404, 'no such review page');
}
