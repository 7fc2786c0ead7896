/**
 * The request lifecycle, top to bottom. One RequestContext is created per request, and only
 * this module writes it; a phase's own output (the stripped head, the upstream fields, the
 * classification, the body read whole, the decision) is handed on to the phases that need
 * it as a value. docs/phases.md is the contract.
 *
 *   admit ─▶ target ─▶ ungovernable ─▶ strip ─▶ intercept ─▶ size ─▶ classify ─▶ decide
 *         ─▶ stamp ─▶ forward (stream both ways) ─▶ respond ─▶ audit
 *
 * Any phase refuses by throwing a BrokerError; the refusal is answered to the child, and
 * nothing of that request goes upstream. The audit step (exchange.ts) runs exactly once for
 * every request, whichever way it ended.
 */
import { STATUS_CODES } from 'node:http';
import {
  BrokerError,
  brokerError,
  CATALOGUE,
  type ErrorCode,
  isBrokerError,
  isErrorCode,
  policyError,
} from '../errors.js';
// Direct module imports, not policy/index.js: the index also loads zod (override schema),
// ~17 ms of startup the data path never needs (bench S5).
import { needsBody } from '../policy/classify.js';
import { defaultDecide } from './decide.js';
import type { BrokerEnv, Tunnel } from './env.js';
import { audit, cutByChild, type Exchange, newExchange } from './exchange.js';
import type { BodyRefusalTaken, InnerRequest, InnerResponse } from './inner.js';
import { type HeadScan, scanHead, signingQuery } from './headers.js';
import { type BodySink, type BodySource, type UpstreamController, UPSTREAM_TIMEOUT_CODES } from './pool.js';
import { sendRefusal } from './refusal.js';
import type { Session } from './session.js';
import type { Classification, Decision, RefusalShape, RequestHead } from './types.js';

/** Everything about one request, created once (pingora `new_ctx`); the audit step reads its Exchange part. */
export interface RequestContext extends Exchange {
  readonly tunnel: Tunnel;
  readonly req: InnerRequest;
  readonly res: InnerResponse;
  /** the child sent `Expect: 100-continue` and has not been told to go on yet */
  expectContinue: boolean;
  /** the body crossed the cap while streaming */
  overCap: boolean;
}

/** The strip phase's output: the head the policy and the credentials see, and the fields that go upstream. */
interface Stripped {
  readonly head: RequestHead;
  readonly upstreamHeaders: string[];
  /** the head declares a body (a Transfer-Encoding, or a Content-Length other than 0) */
  readonly hasBody: boolean;
}

/**
 * The request handler of one tunnel's reader (inner.ts): every request it reads goes through
 * here. A request no phase has to wait for (no body to read whole, no host hook that answers
 * later, a credential at hand) runs the corridor in one synchronous pass up to the upstream
 * write, and its answer and audit follow from the upstream client's callbacks: no promise and
 * no microtask of its own. Only a phase that waits returns a promise, and that promise never
 * rejects: every way a request ends goes through `fail` or `finish` exactly once.
 */
export function handleRequest(
  env: BrokerEnv,
  tunnel: Tunnel,
  req: InnerRequest,
  res: InnerResponse,
): Promise<void> | undefined {
  const ctx: RequestContext = Object.assign(
    newExchange(tunnel.session, tunnel.host, req.method ?? '-', req.url ?? '/'),
    { tunnel, req, res, expectContinue: req.expectContinue, overCap: false },
  );
  // A body the reader refuses while the request is ours is this request's refusal.
  req.onBodyRefused = (refusal) => bodyRefused(ctx, refusal);
  let head: RequestHead | undefined;
  try {
    admit(ctx);
    // one walk over the fields serves the target, size and ungovernable checks and the strip
    const scan = scanHead(req.rawHeaders);
    checkTarget(ctx, scan);
    refuseUngovernable(ctx, scan);
    const stripped = strip(ctx, scan);
    head = stripped.head;
    if (intercept(ctx, head)) return finish(env, ctx);
    checkDeclaredSize(ctx, scan);
    const wait = needsBody(head, ctx.session.overrides) && stripped.hasBody ? readWhole(ctx) : undefined;
    return wait
      ? later(env, ctx, head, wait, (b) => classified(env, ctx, stripped, b))
      : classified(env, ctx, stripped, undefined);
  } catch (err) {
    return fail(env, ctx, head, err);
  }
}

/** classify, then decide (with the body read whole when the classifier needed it). */
function classified(
  env: BrokerEnv,
  ctx: RequestContext,
  stripped: Stripped,
  read: Buffer | undefined,
): Promise<void> | undefined {
  try {
    const classification = classifyPhase(ctx, stripped.head, read);
    ctx.classification = classification;
    if (read === undefined && stripped.hasBody && digestNeedsBody(ctx, classification))
      return later(env, ctx, stripped.head, readWhole(ctx), (b) =>
        decided(env, ctx, stripped, classification, b),
      );
    return decided(env, ctx, stripped, classification, read);
  } catch (err) {
    return fail(env, ctx, stripped.head, err);
  }
}

/** decide, then stamp and forward (the decide hook and the credential may answer later). */
function decided(
  env: BrokerEnv,
  ctx: RequestContext,
  stripped: Stripped,
  classification: Classification,
  body: Buffer | undefined,
): Promise<void> | undefined {
  const { head } = stripped;
  try {
    const decision = decidePhase(ctx.session, head, classification, body);
    return pending(decision)
      ? later(env, ctx, head, decision, (d) => stamped(env, ctx, stripped, body, d))
      : stamped(env, ctx, stripped, body, decision);
  } catch (err) {
    return fail(env, ctx, head, err);
  }
}

function stamped(
  env: BrokerEnv,
  ctx: RequestContext,
  stripped: Stripped,
  body: Buffer | undefined,
  decision: Decision,
): Promise<void> | undefined {
  const { head } = stripped;
  try {
    ctx.decision = decision;
    if (decision.decision === 'deny') throw denial(decision);
    const value = stamp(ctx);
    const send = (): undefined => {
      try {
        forward(env, ctx, stripped, body, (err) =>
          err === undefined ? finish(env, ctx) : fail(env, ctx, head, err),
        );
        return undefined;
      } catch (err) {
        return fail(env, ctx, head, err);
      }
    };
    const go = (v: string | undefined): undefined => {
      if (v !== undefined) stripped.upstreamHeaders.push('authorization', v);
      // A body still to stream goes up once the reader has parsed what it already holds of
      // it: framing it refuses in the same read is refused before anything is sent upstream.
      if (body === undefined && stripped.hasBody) queueMicrotask(send);
      else send();
      return undefined;
    };
    return pending(value) ? later(env, ctx, head, value, go) : go(value);
  } catch (err) {
    return fail(env, ctx, head, err);
  }
}

/** A phase's answer is still to come (a promise, or any thenable a host hook returned). */
function pending<T>(v: T | PromiseLike<T>): v is PromiseLike<T> {
  return typeof (v as { then?: unknown } | undefined)?.then === 'function';
}

/** The slow road: the rest of the corridor once a phase that waits has its answer. */
async function later<T>(
  env: BrokerEnv,
  ctx: RequestContext,
  head: RequestHead,
  wait: PromiseLike<T>,
  next: (value: T) => Promise<void> | undefined,
): Promise<void> {
  let value: T;
  try {
    value = await wait;
  } catch (err) {
    fail(env, ctx, head, err);
    return;
  }
  await next(value);
}

/** A phase threw: the refusal is answered (refuse), then the request is audited. */
function fail(env: BrokerEnv, ctx: RequestContext, head: RequestHead | undefined, err: unknown): undefined {
  try {
    refuse(env, ctx, err, head);
  } catch (e) {
    unexpected(env, ctx, e);
  }
  return finish(env, ctx);
}

/** The request is over, whichever way: its one audit step. */
function finish(env: BrokerEnv, ctx: RequestContext): undefined {
  ctx.req.onBodyRefused = undefined;
  try {
    audit(env, ctx);
  } catch (e) {
    unexpected(env, ctx, e);
  }
  return undefined;
}

/** Should anything escape the corridor, the one request is cut and logged, never the process. */
function unexpected(env: BrokerEnv, ctx: RequestContext, err: unknown): void {
  env.log?.error({ err }, 'clibroker: unexpected failure in the request pipeline');
  ctx.res.destroy();
}

/**
 * The reader's chunked decoder refused the body of this request while it was still ours: the
 * refusal is this request's one event. Once the vendor's answer has begun it is no refusal but
 * the child's body breaking mid-answer, and the reader cuts the connection.
 */
function bodyRefused(ctx: RequestContext, refusal: BrokerError): BodyRefusalTaken {
  if (ctx.res.headersSent) {
    ctx.abortedBy = 'child';
    ctx.abortCode = refusal.code;
    ctx.abortReason = refusal.message;
    return 'cut';
  }
  ctx.refusal = refusal;
  ctx.refusalStatus = sendRefusal(ctx.res, refusal, 'broker', true);
  return 'answered';
}

/** Session open and within its request budget. Every request the child sends counts (newExchange). */
function admit(ctx: RequestContext): void {
  const s = ctx.session;
  if (s.closed) throw new BrokerError('CLI_SESSION_CLOSED');
  if (s.stats.requests > s.limits.maxRequests) {
    throw brokerError('CLI_REQUEST_BUDGET_EXCEEDED', {
      max: s.limits.maxRequests,
      request: s.stats.requests,
    });
  }
}

/** SNI, Host and request-target all name the CONNECT host; the host is in egress. */
function checkTarget(ctx: RequestContext, scan: HeadScan): void {
  const { tunnel, req } = ctx;
  if (req.method === 'CONNECT') throw new BrokerError('CLI_TUNNEL_CONNECT_REFUSED');
  if (tunnel.sniMismatch !== undefined) {
    throw brokerError('CLI_HOST_MISMATCH', { what: 'TLS SNI', got: tunnel.sniMismatch, host: tunnel.host });
  }
  const expect = scan.expect;
  if (expect !== undefined && expect.toLowerCase() !== '100-continue') {
    throw brokerError('CLI_BAD_REQUEST', { problem: 'expectation' });
  }
  if (scan.hosts > 1) throw brokerError('CLI_BAD_REQUEST', { problem: 'host-twice' });
  const url = req.url ?? '';
  if (url[0] !== '/') throw brokerError('CLI_BAD_REQUEST', { problem: 'target-form' });
  const host = (scan.host ?? '').toLowerCase();
  if (host !== tunnel.host && host !== `${tunnel.host}:443`) {
    throw brokerError('CLI_HOST_MISMATCH', { what: 'Host', got: host.slice(0, 100), host: tunnel.host });
  }
  if (!ctx.session.allowsHost(tunnel.host)) {
    throw policyError('CLI_EGRESS_HOST_DENIED', { host: tunnel.host });
  }
}

function refuseUngovernable(ctx: RequestContext, scan: HeadScan): void {
  const scheme = scan.signing ?? signingQuery(ctx.req.url);
  if (scheme) {
    throw brokerError('CLI_REQUEST_SIGNING_UNSUPPORTED', { scheme });
  }
}

function strip(ctx: RequestContext, scan: HeadScan): Stripped {
  const cl = scan.contentLength;
  return {
    head: { method: ctx.req.method, host: ctx.tunnel.host, target: ctx.req.url, headers: scan.view },
    upstreamHeaders: scan.upstream,
    hasBody: scan.transferEncoding !== undefined || (cl !== undefined && cl !== '0'),
  };
}

/** The credentials phase may answer itself (bootstrap token endpoint): never forwarded. */
function intercept(ctx: RequestContext, head: RequestHead): boolean {
  const synthetic = ctx.session.credentials?.intercept?.(head);
  if (!synthetic) return false;
  const body = typeof synthetic.body === 'string' ? Buffer.from(synthetic.body) : synthetic.body;
  const r = synthetic.refusal;
  if (r)
    ctx.refusal = new BrokerError(r.code, {
      ...(r.policyCode ? { policyCode: r.policyCode } : {}),
      message: r.reason,
    });
  else
    ctx.decision = {
      decision: 'allow',
      reason: 'answered by clibroker (credential bootstrap); not forwarded',
    };
  ctx.refusalStatus = synthetic.status;
  ctx.bytesDown = body.length;
  ctx.req.resume(); // discard the child's body (the placeholder secret, for token requests)
  ctx.res.writeHead(synthetic.status, { ...synthetic.headers, 'content-length': String(body.length) });
  ctx.res.end(body);
  return true;
}

function checkDeclaredSize(ctx: RequestContext, scan: HeadScan): void {
  const cl = scan.contentLength;
  if (cl !== undefined && Number(cl) > ctx.session.limits.maxBodyBytes)
    throw tooLarge(ctx.session, Number(cl));
}

function tooLarge(s: Session, size?: number): BrokerError {
  return brokerError('CLI_UPLOAD_TOO_LARGE', {
    max: s.limits.maxBodyBytes,
    ...(size === undefined ? {} : { size }),
  });
}

/** Classify, from the session's memo when the request's reading depends on its method and target alone. */
function classifyPhase(ctx: RequestContext, head: RequestHead, body: Buffer | undefined): Classification {
  return ctx.session.classes.classify({
    method: head.method,
    target: head.target,
    headers: head.headers,
    body,
    overrides: ctx.session.overrides,
  });
}

/**
 * A destructive request's approval digest covers its body, so it is read whole too — still
 * never past the cap. Only when someone decides on it: the default refuses anyway.
 */
function digestNeedsBody(ctx: RequestContext, cls: Classification): boolean {
  return cls.class === 'destructive' && ctx.session.decide !== undefined;
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

/** The host's decide hook when it plugged one in (approvals), else the policy's default. */
function decidePhase(
  s: Session,
  head: RequestHead,
  cls: Classification,
  body: Buffer | undefined,
): Decision | Promise<Decision> {
  return s.decide ? s.decide(head, cls, body) : defaultDecide(s.tier, cls);
}

/** A denial as the refusal the child is answered with. */
function denial(d: Extract<Decision, { decision: 'deny' }>): BrokerError {
  const policyCode = d.policyCode !== undefined && isErrorCode(d.policyCode) ? d.policyCode : undefined;
  return new BrokerError(refusalCode(d.code), {
    ...(policyCode ? { policyCode } : {}),
    message: d.reason,
    ...(d.details ? { details: d.details } : {}),
  });
}

/**
 * A host hook's denial is a policy refusal whatever code it names: one outside the catalogue,
 * or one that is not answered with a 4xx (an upstream or internal code), is POLICY_BLOCKED.
 */
function refusalCode(code: string): ErrorCode {
  if (!isErrorCode(code)) return 'POLICY_BLOCKED';
  const status = CATALOGUE[code].status;
  return status !== undefined && status >= 400 && status < 500 ? code : 'POLICY_BLOCKED';
}

/** The credential for this request's host, when the session stamps one (now, or once it is read). */
function stamp(ctx: RequestContext): string | undefined | Promise<string | undefined> {
  return ctx.session.credentials?.authorizationFor(ctx.tunnel.host);
}

const RESPONSE_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'proxy-authenticate',
]);

/**
 * The child's body as the upstream client reads it, chunk by chunk as it arrives: counted,
 * and failed at the cap before a byte past it goes anywhere.
 */
function cappedSource(ctx: RequestContext): BodySource {
  const req = ctx.req;
  const cap = ctx.session.limits.maxBodyBytes;
  let sink: BodySink | undefined;
  const fail = (err: Error): void => {
    const s = sink;
    stop();
    s?.error(err);
  };
  const onData = (chunk: Buffer): void => {
    ctx.bytesUp += chunk.length;
    if (ctx.bytesUp > cap) {
      ctx.overCap = true;
      fail(tooLarge(ctx.session));
      return;
    }
    sink?.data(chunk);
  };
  const onEnd = (): void => {
    const s = sink;
    stop();
    s?.end();
  };
  const onClose = (): void => fail(prematureClose());
  const stop = (): void => {
    sink = undefined;
    req.stopRelay();
    req.off('error', fail);
    req.off('close', onClose);
  };
  return {
    start(s) {
      if (req.destroyed) {
        const err = req.errored ?? prematureClose();
        queueMicrotask(() => s.error(err));
        return;
      }
      sink = s;
      req.on('error', fail);
      req.on('close', onClose);
      // straight from the reader: no stream buffer, tick or event per chunk
      req.relayBody(onData, onEnd);
    },
    pause: () => req.pauseRelay(),
    resume: () => req.resumeRelay(),
    stop,
  };
}

/** The child's body stream closed before its end: the child left, or its framing broke. */
function prematureClose(): Error {
  return Object.assign(new Error('the request body ended early'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

/** How long after the session's deadline the upstream timeout fires. */
const DEADLINE_GRACE_MS = 1000;

/** The child's side of the tunnel is gone: nothing more can be told to it. */
function childGone(ctx: RequestContext): boolean {
  // Not req.socket: node lets go of it (null) once the request stream is destroyed.
  return ctx.res.destroyed || ctx.tunnel.closed === true;
}

/**
 * Streams the request up and the response back with backpressure both ways. A close on the
 * child's side, in any state — still queued for a connection, uploading, paused on drain,
 * mid-response, or queued behind an earlier pipelined response — aborts the upstream request
 * at once (closing its connection) and settles the phase, so the audit step runs now, not
 * when a timeout fires. `done` is called exactly once: with nothing when the request is over,
 * with the refusal or failure otherwise.
 */
function forward(
  env: BrokerEnv,
  ctx: RequestContext,
  { head, upstreamHeaders, hasBody }: Stripped,
  whole: Buffer | undefined,
  done: (err?: BrokerError) => void,
): void {
  const { req, res } = ctx;
  // Refused while an earlier phase awaited (the body's framing broke): nothing goes upstream.
  if (ctx.refusal !== undefined) {
    done();
    return;
  }
  if (childGone(ctx)) {
    cutByChild(ctx);
    done();
    return;
  }
  goOn(ctx);
  const body = whole ?? (hasBody ? cappedSource(ctx) : null);
  // The upstream timeout ends just after the session's deadline, never before it: a request
  // still in flight then is cut by the deadline, not reported as the vendor being slow.
  const remaining = Math.max(1, ctx.session.remainingMs()) + DEADLINE_GRACE_MS;
  ctx.session.stats.forwarded++;
  let settled = false;
  const settle = (err?: BrokerError): void => {
    if (settled) return;
    settled = true;
    res.off('close', onClose);
    res.off('drain', onDrain);
    ctx.tunnel.onClose.delete(onClose);
    done(err);
  };
  const onClose = (): void => {
    if (ctx.ended) return;
    cutByChild(ctx);
    controller.abort();
    settle();
  };
  const onDrain = (): void => controller.resume();
  res.once('close', onClose);
  ctx.tunnel.onClose.add(onClose);
  const controller: UpstreamController = env.upstream.request(
    {
      host: head.host,
      method: head.method,
      path: head.target,
      headers: upstreamHeaders,
      body,
      timeoutMs: remaining,
    },
    {
      onStart() {
        ctx.started = true;
      },
      onHead(status, reason, headers) {
        // The broker already answered (the child's body framing broke mid-upload).
        if (res.headersSent) {
          controller.abort();
          return settle();
        }
        ctx.status = status;
        res.writeVendorHead(status, reason || STATUS_CODES[status] || '', headers, RESPONSE_HOP);
      },
      onData(chunk) {
        ctx.bytesDown += chunk.length;
        if (!res.write(chunk)) {
          controller.pause();
          res.once('drain', onDrain);
        }
      },
      onEnd() {
        ctx.ended = true;
        res.end();
        // answered before the whole body was sent: the rest is read and dropped
        if (!req.complete) drain(ctx);
        settle();
      },
      onError(err) {
        if (settled) return;
        if (ctx.overCap) return settle(tooLarge(ctx.session));
        // The child's close can surface first as an error of the body stream it fed.
        if (childGone(ctx)) {
          cutByChild(ctx);
          return settle();
        }
        // A vendor that refused the handshake for want of a client certificate never read
        // the request, even when TLS 1.3 let it be written first: it was not sent.
        if (isBrokerError(err) && err.code === 'CLI_CLIENT_CERT_UNSUPPORTED') ctx.started = false;
        settle(isBrokerError(err) ? err : upstreamError(err, ctx));
      },
    },
  );
}

/** The upstream failure, told as what is known: never sent, sent with no answer, or answer cut off. */
function upstreamError(err: Error, ctx: RequestContext): BrokerError {
  const code = (err as { code?: string }).code ?? '';
  const name = UPSTREAM_TIMEOUT_CODES.has(code) ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_UNAVAILABLE';
  const stage = ctx.status !== undefined ? 'response' : ctx.started ? 'sent' : 'connect';
  return brokerError(name, { stage, cause: code || err.message }, { cause: err });
}

/**
 * A phase threw. A BrokerError is a refusal, answered to the child — unless the vendor had
 * already answered (then it is an upstream failure mid-response: the response is cut, and the
 * event keeps the vendor's status). Any other error while the child is gone is the child's
 * close seen from a stream; otherwise it is an internal failure.
 */
function refuse(env: BrokerEnv, ctx: RequestContext, err: unknown, head: RequestHead | undefined): void {
  if (ctx.abortedBy !== undefined || ctx.refusal !== undefined) return;
  // A BrokerError a hook built with a code outside the catalogue is no coded refusal.
  const coded = isBrokerError(err) && isErrorCode(err.code);
  if (!coded && childGone(ctx)) {
    cutByChild(ctx);
    return;
  }
  if (!coded) env.log?.error({ err }, 'clibroker: unexpected failure in the request pipeline');
  const e = coded ? err : new BrokerError('INTERNAL_ERROR', { cause: err });
  if (ctx.status !== undefined) {
    ctx.abortedBy = 'upstream';
    ctx.abortCode = e.code;
    ctx.abortReason = e.message;
    ctx.res.destroy();
    return;
  }
  if (e.side === 'upstream' && ctx.session.closed) {
    cutByChild(ctx); // the session's end closed the upstream request too: the deadline's doing
    return;
  }
  if (e.side === 'upstream' && ctx.started) ctx.abortedBy = 'upstream';
  if (childGone(ctx)) {
    // Refused after the child left (a person said no after it gave up): nobody was answered.
    cutByChild(ctx);
    ctx.refusal = e;
    return;
  }
  ctx.refusal = e;
  // Past the budget every further request on this tunnel would be refused too: it is closed
  // after this answer, and the session opens no new tunnel (tunnel.ts).
  ctx.refusalStatus = sendRefusal(
    ctx.res,
    e,
    refusalShape(ctx.session, head),
    e.code === 'CLI_REQUEST_BUDGET_EXCEEDED',
  );
  if (!ctx.req.complete) drain(ctx);
}

/**
 * The shape the credentials give a refusal of this request (OAuth JSON at their token
 * endpoint). Before the head was stripped there is nothing to ask about; a hook that throws
 * leaves the broker's own shape, so the refusal is still answered.
 */
function refusalShape(s: Session, head: RequestHead | undefined): RefusalShape {
  if (head === undefined || s.credentials?.refusalShape === undefined) return 'broker';
  try {
    return s.credentials.refusalShape(head) === 'oauth' ? 'oauth' : 'broker';
  } catch {
    return 'broker';
  }
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
    if (drained > limit) ctx.req.socket?.destroy();
  });
  ctx.req.resume();
}
