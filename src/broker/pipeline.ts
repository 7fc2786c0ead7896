/**
 * The request lifecycle, top to bottom (STYLE: pingora's ProxyHttp). One RequestContext is
 * created per request and every phase reads and writes it. docs/phases.md is the contract.
 *
 *   admit ─▶ target ─▶ ungovernable ─▶ strip ─▶ intercept ─▶ size ─▶ classify ─▶ decide
 *         ─▶ stamp ─▶ forward (stream both ways) ─▶ respond ─▶ audit
 *
 * Any phase refuses by throwing a BrokerError; the refusal is answered to the child and
 * audited as egress.blocked, and nothing of that request goes upstream.
 */
import { type IncomingMessage, STATUS_CODES, type ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { redactPath } from '../audit/redact.js';
import { BrokerError, isBrokerError } from '../errors.js';
// Direct module imports, not policy/index.js: the index also loads zod (override schema),
// ~17 ms of startup the data path never needs (bench S5).
import { classify, needsBody } from '../policy/classify.js';
import { decide, toEngineDecision } from '../policy/decide.js';
import { refusalMessage } from '../policy/messages.js';
import type { BrokerEnv, Tunnel } from './env.js';
import { signingScheme, stripHeaders } from './headers.js';
import { sendRefusal } from './refusal.js';
import type { Session } from './session.js';
import type { Classification, Decision, RequestHead, Tier } from './types.js';

/** Everything about one request, created once (pingora `new_ctx`). */
export interface RequestContext {
  readonly tunnel: Tunnel;
  readonly session: Session;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly start: number;
  /** the child sent `Expect: 100-continue` and has not been told to go on yet */
  expectContinue: boolean;
  head?: RequestHead;
  upstreamHeaders?: string[];
  classification?: Classification;
  decision?: Decision;
  /** the request body, when a phase needed it whole (GraphQL) */
  body?: Buffer;
  status?: number;
  bytesUp: number;
  bytesDown: number;
  /** the body crossed the cap while streaming */
  overCap: boolean;
}

export async function handleRequest(env: BrokerEnv, tunnel: Tunnel, req: IncomingMessage, res: ServerResponse, expectContinue: boolean): Promise<void> {
  const ctx: RequestContext = {
    tunnel,
    session: tunnel.session,
    req,
    res,
    start: performance.now(),
    expectContinue,
    bytesUp: 0,
    bytesDown: 0,
    overCap: false,
  };
  try {
    admit(ctx);
    checkTarget(ctx);
    refuseUngovernable(ctx);
    strip(ctx);
    if (intercept(ctx)) return audit(env, ctx);
    checkDeclaredSize(ctx);
    await classifyPhase(ctx);
    await decidePhase(ctx);
    await stamp(ctx);
    await forward(env, ctx);
  } catch (err) {
    refuse(env, ctx, err);
  }
  audit(env, ctx);
}

/** Session open and within its request budget. Every request the child sends counts. */
function admit(ctx: RequestContext): void {
  const s = ctx.session;
  if (s.closed) throw new BrokerError('CLI_SESSION_CLOSED');
  if (++s.stats.requests > s.limits.maxRequests) {
    throw new BrokerError('CLI_REQUEST_BUDGET_EXCEEDED', {
      message: `CLI_REQUEST_BUDGET_EXCEEDED: this call may send at most ${s.limits.maxRequests} requests; request ${s.stats.requests} was refused. Split the work over several calls.`,
    });
  }
}

/** SNI, Host and request-target all name the CONNECT host; the host is in egress. */
function checkTarget(ctx: RequestContext): void {
  const { tunnel, req } = ctx;
  if (req.method === 'CONNECT') throw new BrokerError('CLI_TUNNEL_CONNECT_REFUSED');
  if (tunnel.sniMismatch !== undefined) {
    throw new BrokerError('CLI_HOST_MISMATCH', { message: `CLI_HOST_MISMATCH: TLS SNI ${JSON.stringify(tunnel.sniMismatch)} does not match the CONNECT host ${tunnel.host}.` });
  }
  const url = req.url ?? '';
  if (url[0] !== '/') throw new BrokerError('CLI_BAD_REQUEST', { message: 'CLI_BAD_REQUEST: inside the tunnel only origin-form request targets (/path?query) are accepted.' });
  const host = (req.headers.host ?? '').toLowerCase();
  if (host !== tunnel.host && host !== `${tunnel.host}:443`) {
    throw new BrokerError('CLI_HOST_MISMATCH', { message: `CLI_HOST_MISMATCH: Host ${JSON.stringify(host.slice(0, 100))} does not match the CONNECT host ${tunnel.host}.` });
  }
  if (!ctx.session.allowsHost(tunnel.host)) {
    throw new BrokerError('POLICY_BLOCKED', {
      policyCode: 'CLI_EGRESS_HOST_DENIED',
      message: `POLICY_BLOCKED (CLI_EGRESS_HOST_DENIED): ${tunnel.host} is not in this extension's egress list, so the request was not sent. Add the host to the extension's egress list to allow it.`,
    });
  }
}

function refuseUngovernable(ctx: RequestContext): void {
  const scheme = signingScheme(ctx.req.rawHeaders, ctx.req.url!);
  if (scheme) {
    throw new BrokerError('CLI_REQUEST_SIGNING_UNSUPPORTED', {
      message: `CLI_REQUEST_SIGNING_UNSUPPORTED: the request is signed by the client (${scheme}); clibroker cannot stamp or govern signed requests, so it was not sent.`,
    });
  }
}

function strip(ctx: RequestContext): void {
  const { upstream, view } = stripHeaders(ctx.req.rawHeaders);
  ctx.upstreamHeaders = upstream;
  ctx.head = { method: ctx.req.method!, host: ctx.tunnel.host, target: ctx.req.url!, headers: view };
}

/** The credentials phase may answer itself (bootstrap token endpoint): never forwarded. */
function intercept(ctx: RequestContext): boolean {
  const synthetic = ctx.session.credentials?.intercept?.(ctx.head!);
  if (!synthetic) return false;
  const body = typeof synthetic.body === 'string' ? Buffer.from(synthetic.body) : synthetic.body;
  const r = synthetic.refusal;
  ctx.decision = r
    ? { decision: 'deny', code: r.code, ...(r.policyCode ? { policyCode: r.policyCode } : {}), reason: r.reason }
    : { decision: 'allow', reason: 'answered by clibroker (credential bootstrap); not forwarded' };
  if (r) ctx.session.stats.refused++;
  ctx.status = synthetic.status;
  ctx.bytesDown = body.length;
  ctx.req.resume(); // discard the child's body (the placeholder secret, for token requests)
  ctx.res.writeHead(synthetic.status, { ...synthetic.headers, 'content-length': String(body.length) });
  ctx.res.end(body);
  return true;
}

function checkDeclaredSize(ctx: RequestContext): void {
  const cl = ctx.req.headers['content-length'];
  if (cl !== undefined && Number(cl) > ctx.session.limits.maxBodyBytes) throw tooLarge(ctx.session, Number(cl));
}

function tooLarge(s: Session, size?: number): BrokerError {
  return new BrokerError('CLI_UPLOAD_TOO_LARGE', {
    message: `CLI_UPLOAD_TOO_LARGE: request bodies may be at most ${s.limits.maxBodyBytes} bytes${size === undefined ? '' : `; this one is ${size}`}. The request was not sent.`,
  });
}

function hasBody(req: IncomingMessage): boolean {
  const cl = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (cl !== undefined && cl !== '0');
}

async function classifyPhase(ctx: RequestContext): Promise<void> {
  const head = ctx.head!;
  if (needsBody(head) && hasBody(ctx.req)) ctx.body = await readWhole(ctx);
  ctx.classification = classify({ method: head.method, target: head.target, headers: head.headers, body: ctx.body, overrides: ctx.session.overrides as never });
  // A destructive request's approval digest covers its body (DESIGN §5), so it is read whole
  // too — still never past the cap. Only when someone decides on it: the default refuses anyway.
  if (ctx.classification.class === 'destructive' && ctx.body === undefined && ctx.session.decide && hasBody(ctx.req)) ctx.body = await readWhole(ctx);
}

/** Buffers the body, never beyond the cap (only for phases that need it whole). */
async function readWhole(ctx: RequestContext): Promise<Buffer> {
  goOn(ctx);
  const cap = ctx.session.limits.maxBodyBytes;
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    ctx.bytesUp += chunk.length;
    if (ctx.bytesUp > cap) throw tooLarge(ctx.session);
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, ctx.bytesUp);
}

/** Tells a child waiting on `Expect: 100-continue` to send its body (only once a phase reads it). */
function goOn(ctx: RequestContext): void {
  if (ctx.expectContinue) {
    ctx.expectContinue = false;
    ctx.res.writeContinue();
  }
}

async function decidePhase(ctx: RequestContext): Promise<void> {
  const s = ctx.session;
  const cls = ctx.classification!;
  const d = s.decide ? await s.decide(ctx.head!, cls, ctx.body) : defaultDecide(s.tier, cls);
  ctx.decision = d;
  if (d.decision === 'deny') {
    throw new BrokerError(d.code, { ...(d.policyCode ? { policyCode: d.policyCode } : {}), message: d.reason, ...(d.details ? { details: d.details } : {}) });
  }
}

/** Without a host's decide hook: the policy's decide with no person to ask (reads pass, writes need tier write). */
export function defaultDecide(tier: Tier, cls: Classification): Decision {
  const d = decide({ class: cls.class, tier, context: 'api' });
  if (d.decision === 'allow') return d;
  return { ...toEngineDecision(d), reason: refusalMessage(d, cls) };
}

async function stamp(ctx: RequestContext): Promise<void> {
  const value = await ctx.session.credentials?.authorizationFor(ctx.tunnel.host);
  if (value !== undefined) ctx.upstreamHeaders!.push('authorization', value);
}

const RESPONSE_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'proxy-authenticate']);

async function* capped(ctx: RequestContext): AsyncGenerator<Buffer> {
  const cap = ctx.session.limits.maxBodyBytes;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    ctx.bytesUp += chunk.length;
    if (ctx.bytesUp > cap) {
      ctx.overCap = true;
      throw tooLarge(ctx.session);
    }
    yield chunk;
  }
}

/** Streams the request up and the response back with backpressure both ways. */
function forward(env: BrokerEnv, ctx: RequestContext): Promise<void> {
  const { req, res, head } = ctx;
  goOn(ctx);
  const body = ctx.body ?? (hasBody(req) ? (capped(ctx) as unknown as Dispatcher.DispatchOptions['body']) : null);
  // undici's own timeouts never outlive the session (whose deadline closes everything anyway)
  const remaining = Math.max(1, ctx.session.remainingMs());
  ctx.session.stats.forwarded++;
  return new Promise<void>((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    const onClose = (): void => {
      if (!res.writableFinished) controller?.abort(new Error('the child closed the connection'));
    };
    res.once('close', onClose);
    const onDrain = (): void => controller?.resume();
    env.upstream.dispatch(
      { origin: `https://${head!.host}`, path: head!.target, method: head!.method as Dispatcher.HttpMethod, headers: ctx.upstreamHeaders!, body, headersTimeout: remaining, bodyTimeout: remaining },
      {
        onRequestStart(c) {
          controller = c;
        },
        onResponseStart(_c, status, headers, statusMessage) {
          if (status < 200) return;
          ctx.status = status;
          const out: Record<string, string | string[]> = {};
          for (const [k, v] of Object.entries(headers)) if (v !== undefined && !RESPONSE_HOP.has(k)) out[k] = v;
          res.writeHead(status, statusMessage || STATUS_CODES[status] || '', out);
        },
        onResponseData(c, chunk) {
          ctx.bytesDown += chunk.length;
          if (!res.write(chunk)) {
            c.pause();
            res.once('drain', onDrain);
          }
        },
        onResponseEnd() {
          res.off('close', onClose);
          res.end();
          resolve();
        },
        onResponseError(_c, err) {
          res.off('close', onClose);
          res.off('drain', onDrain);
          reject(ctx.overCap ? tooLarge(ctx.session) : isBrokerError(err) ? err : upstreamError(err));
        },
      },
    );
  });
}

function upstreamError(err: Error): BrokerError {
  const code = (err as { code?: string }).code ?? '';
  const timeout = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT';
  return new BrokerError(timeout ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_UNAVAILABLE', {
    message: `${timeout ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_UNAVAILABLE'}: the vendor host could not be reached (${code || err.message}).`,
    cause: err,
  });
}

function refuse(env: BrokerEnv, ctx: RequestContext, err: unknown): void {
  const e = isBrokerError(err) ? err : new BrokerError('INTERNAL_ERROR', { cause: err });
  if (!isBrokerError(err)) env.logger?.error({ err }, 'clibroker: unexpected failure in the request pipeline');
  ctx.session.stats.refused++;
  ctx.decision = { decision: 'deny', code: e.code, ...(e.policyCode ? { policyCode: e.policyCode } : {}), reason: e.message };
  const head = ctx.head;
  const oauth = head !== undefined && head.method === 'POST' && /\/token$/.test(head.target.split('?')[0]!) && (head.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
  ctx.status = sendRefusal(ctx.res, e, { oauth });
  if (!ctx.req.complete) drain(ctx);
}

/** Unread body bytes a refused request may still send before its connection is cut. */
const DRAIN_LIMIT_FACTOR = 4;

/**
 * Reads and discards the rest of a refused request's body. Closing at once would race the
 * child's upload: its data arriving after our close draws a TCP RST, which discards our
 * refusal from the child's receive buffer (curl then prints nothing). Past a few caps'
 * worth the connection is cut anyway; nothing drained is ever forwarded.
 */
function drain(ctx: RequestContext): void {
  const limit = DRAIN_LIMIT_FACTOR * ctx.session.limits.maxBodyBytes;
  let drained = 0;
  ctx.req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > limit) ctx.req.socket.destroy();
  });
  ctx.req.resume();
}

function audit(env: BrokerEnv, ctx: RequestContext): void {
  const d = ctx.decision;
  const denied = d?.decision === 'deny';
  env.auditor.egress(ctx.session, {
    type: denied ? 'egress.blocked' : 'egress.allowed',
    time: new Date().toISOString(),
    session: ctx.session.id,
    ...(ctx.session.labels ? { labels: ctx.session.labels } : {}),
    method: ctx.req.method ?? '-',
    host: ctx.tunnel.host,
    path: redactPath(ctx.req.url ?? '/'),
    ...(ctx.classification ? { class: ctx.classification.class } : {}),
    decision: denied ? 'deny' : 'allow',
    reason: d?.reason ?? 'unknown',
    ...(d?.decision === 'deny' ? { code: d.code, ...(d.policyCode ? { policyCode: d.policyCode } : {}) } : {}),
    ...(ctx.status !== undefined ? { status: ctx.status } : {}),
    requestBytes: ctx.bytesUp,
    responseBytes: ctx.bytesDown,
    durationMs: Math.round((performance.now() - ctx.start) * 1000) / 1000,
  });
  ctx.session.stats.bytesUp += ctx.bytesUp;
  ctx.session.stats.bytesDown += ctx.bytesDown;
}
