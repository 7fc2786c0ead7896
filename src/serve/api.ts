/**
 * The Platform API (`/v1/…`, JSON, documented by schemas/openapi.json):
 *
 *   POST /v1/tools/execute {toolId, input, cliTier?, context?}   executor   (held for a person in agent-step)
 *   GET  /v1/tools                                              executor, reviewer
 *   GET  /v1/approvals[?status&runId&limit&order]                reviewer, executor
 *   GET  /v1/approvals/{id}                                     reviewer, executor
 *   POST /v1/approvals/{id}/approve | /reject                   reviewer   (the store's atomic decide)
 *   POST /v1/approvals/{id}/resume                              executor   (an approved call nobody waits for)
 *   GET  /v1/audit[?runId&type&decision&extensionId&since&until&limit&order&after]  reviewer, executor
 *
 * `cliTier` and `context` are the calling platform's (the executor's), never the agent's:
 * the agent's input is `input`, exactly `{args, stdin?}`. The tier it asks for is capped at
 * `serve.executorMaxTier` before the ceiling and the assignment cap it.
 */
import type { IncomingMessage } from 'node:http';
import { redactLogText } from '../audit/logger.js';
import { isObject } from '../front/body.js';
import { BrokerError, brokerError } from '../errors.js';
import { checkCallOptions } from '../host/input.js';
import type { CallOptions, ToolHost, ToolOutput } from '../host/types.js';
import type { Tier } from '../policy/types.js';
import type { ApprovalQuery, EventQuery, Store, StoreEventType } from '../store/types.js';
import { STORE_EVENT_TYPES } from '../store/types.js';
import type { Caller, Role } from './auth.js';
import type { Holder } from './hold.js';
import { approvalView } from './view.js';
import { ServeRefusal, readJson } from './wire.js';

const APPROVAL_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
const APPROVAL_RE = /^\/v1\/approvals\/([^/]+)(?:\/(approve|reject|resume))?$/;

export interface ApiContext {
  host: ToolHost;
  store: Store;
  holder: Holder;
  /** the caller for one of these roles, or the coded refusal */
  who(allowed: readonly Role[]): Promise<Caller>;
  /** the log line of the request */
  line: Record<string, unknown>;
  /** the highest tier the executor may request (`serve.executorMaxTier`); a requested write above it runs at read */
  executorMaxTier: Tier;
}

/**
 * The executor's options with the tier capped at `max`, and whether the cap lowered it. The
 * cap comes first, before the ceiling and the assignment: a call it lowered runs at read with
 * `cliTierReason` `executor-max-tier`, and a refused write names the cap as what kept it at read.
 */
function capTier(opts: Required<CallOptions>, max: Tier): { opts: Required<CallOptions>; capped: boolean } {
  if (opts.cliTier === 'write' && max === 'read')
    return { opts: { ...opts, cliTier: 'read', tierSource: 'serve.executorMaxTier' }, capped: true };
  return { opts, capped: false };
}

function only(method: string, want: string, path: string): void {
  if (method !== want) throw new ServeRefusal(405, `${path} takes ${want}`);
}

function approvalId(raw: string): string {
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    throw new ServeRefusal(400, 'the approval id is not percent-encoded properly');
  }
  if (!APPROVAL_ID_RE.test(id))
    throw new ServeRefusal(400, 'the approval id is malformed (letters, digits, . _ : -, at most 128)');
  return id;
}

/** `{toolId, input, cliTier?, context?}` and nothing else. */
function executeBody(body: unknown): { toolId: string; input: unknown; options: Record<string, unknown> } {
  if (!isObject(body))
    throw new ServeRefusal(400, 'the body must be a JSON object {"toolId", "input", "cliTier"?, "context"?}');
  const extra = Object.keys(body).filter((k) => !['toolId', 'input', 'cliTier', 'context'].includes(k));
  if (extra.length) {
    const named = extra.slice(0, 8).map((k) => redactLogText(k).slice(0, 64));
    throw new ServeRefusal(
      400,
      `the body holds only toolId, input, cliTier and context, not ${named.join(', ')}`,
      {
        fields: named,
      },
    );
  }
  const { toolId } = body;
  if (typeof toolId !== 'string' || toolId === '' || toolId.length > 256)
    throw new ServeRefusal(
      400,
      'toolId must be a tool name or id (a non-empty string of at most 256 characters)',
    );
  if (!('input' in body)) throw new ServeRefusal(400, 'input is missing: {"args": [...], "stdin"?: "..."}');
  const options: Record<string, unknown> = {};
  if (body['cliTier'] !== undefined) options['cliTier'] = body['cliTier'];
  if (body['context'] !== undefined) options['context'] = body['context'];
  return { toolId, input: body['input'], options };
}

function noBody(req: IncomingMessage): void {
  const len = req.headers['content-length'];
  if ((len !== undefined && len !== '0') || req.headers['transfer-encoding'])
    throw new ServeRefusal(400, 'GET takes no body');
}

const int = (v: string | null, name: string): number | undefined => {
  if (v === null) return undefined;
  if (!/^\d{1,9}$/.test(v)) throw new ServeRefusal(400, `${name} must be a non-negative integer`);
  return Number(v);
};

function auditQuery(q: URLSearchParams): EventQuery {
  const known = ['runId', 'type', 'decision', 'extensionId', 'since', 'until', 'limit', 'order', 'after'];
  const extra = [...q.keys()].filter((k) => !known.includes(k));
  if (extra.length)
    throw new ServeRefusal(
      400,
      `unknown query parameter(s) ${extra
        .slice(0, 8)
        .map((k) => redactLogText(k).slice(0, 40))
        .join(', ')}`,
    );
  const out: EventQuery = {};
  const runId = q.get('runId');
  if (runId !== null) out.runId = runId.slice(0, 128);
  const types = q.getAll('type');
  if (types.length) {
    for (const t of types)
      if (!STORE_EVENT_TYPES.includes(t as StoreEventType))
        throw new ServeRefusal(400, `type must be one of ${STORE_EVENT_TYPES.join(', ')}`);
    out.type = types as StoreEventType[];
  }
  const decision = q.get('decision');
  if (decision !== null) {
    if (decision !== 'allow' && decision !== 'deny')
      throw new ServeRefusal(400, 'decision must be allow or deny');
    out.decision = decision;
  }
  const ext = q.get('extensionId');
  if (ext !== null) out.extensionId = ext.slice(0, 64);
  for (const k of ['since', 'until'] as const) {
    const v = q.get(k);
    if (v === null) continue;
    if (Number.isNaN(Date.parse(v))) throw new ServeRefusal(400, `${k} must be an ISO 8601 time`);
    out[k] = v;
  }
  Object.assign(out, page(q));
  const after = int(q.get('after'), 'after');
  if (after !== undefined) out.after = after;
  return out;
}

/** The paging every list takes: `limit` (1..1000, default 100) and `order`. */
function page(q: URLSearchParams): { limit: number; order?: 'oldest' | 'newest' } {
  const limit = int(q.get('limit'), 'limit');
  if (limit !== undefined && (limit < 1 || limit > 1000))
    throw new ServeRefusal(400, 'limit must be 1..1000');
  const order = q.get('order');
  if (order === null) return { limit: limit ?? 100 };
  if (order !== 'oldest' && order !== 'newest') throw new ServeRefusal(400, 'order must be oldest or newest');
  return { limit: limit ?? 100, order };
}

function approvalQuery(q: URLSearchParams): ApprovalQuery {
  const extra = [...q.keys()].filter((k) => !['status', 'runId', 'limit', 'order'].includes(k));
  if (extra.length) throw new ServeRefusal(400, 'approvals take status, runId, limit and order only');
  const out: ApprovalQuery = {};
  const status = q.get('status');
  if (status !== null) {
    if (!['pending', 'approved', 'rejected', 'consumed'].includes(status))
      throw new ServeRefusal(400, 'status must be pending, approved, rejected or consumed');
    out.status = status as NonNullable<ApprovalQuery['status']>;
  }
  const runId = q.get('runId');
  if (runId !== null) out.runId = runId.slice(0, 128);
  Object.assign(out, page(q));
  return out;
}

/** A decision through the API or the review page: the store decides atomically, the waiting call wakes. */
export async function decide(
  ctx: Pick<ApiContext, 'host' | 'holder'>,
  id: string,
  verdict: 'approve' | 'reject',
  who: string,
) {
  const a = verdict === 'approve' ? await ctx.host.approve(id, who) : await ctx.host.reject(id, who);
  ctx.holder.decided(id);
  return approvalView(a);
}

/**
 * Resume an approved call whose wait ended without it (the replica that held it stopped or
 * died, the client went away): the whole command runs again once, at tier write, with that one
 * request approved; the store's single consumption means the vendor sees it once whichever
 * replica resumes. A resumed call runs at write, so an executor capped below write
 * (`serve.executorMaxTier`) cannot resume: the cap holds here as on every call.
 */
async function resume(req: IncomingMessage, ctx: ApiContext, id: string, signal: AbortSignal) {
  await ctx.who(['executor']);
  const body = await readJson(req);
  if (body !== undefined && !(isObject(body) && Object.keys(body).length === 0))
    throw new ServeRefusal(400, 'resume takes no body (or {})');
  if (ctx.executorMaxTier !== 'write')
    throw new BrokerError('POLICY_BLOCKED', {
      policyCode: 'CLI_REQUEST_TIER_DENIED',
      message: `a resumed call runs at tier write, and serve.executorMaxTier caps the executor at ${ctx.executorMaxTier}; approval ${id} was not resumed. An operator raises serve.executorMaxTier to write.`,
      details: { approvalId: id, tierSource: 'serve.executorMaxTier' },
    });
  // only an approved approval that no call waits for resumes: a pending one would pause
  // again, a consumed one has run
  const a = await ctx.store.getApproval(id);
  if (!a) throw brokerError('APPROVAL_NOT_FOUND', { id }, { details: { approvalId: id } });
  // a call on this server or another still waits for it (that server's lease is live): that call runs it
  const live = a.heldUntil !== undefined && Date.parse(a.heldUntil) > Date.now();
  if ((a.status === 'pending' || a.status === 'approved') && (live || ctx.holder.waiting().includes(id)))
    throw brokerError(
      'SERVE_APPROVAL_HELD',
      { approvalId: id },
      { details: { approvalId: id, ...(a.heldUntil ? { heldUntil: a.heldUntil } : {}) } },
    );
  if (a.status !== 'approved')
    throw brokerError(
      'APPROVAL_NOT_PENDING',
      { id, status: a.status },
      { details: { approvalId: id, status: a.status } },
    );
  const out: ToolOutput = await ctx.host.resume(id, { signal });
  ctx.line['runId'] = out.runId;
  return out;
}

/** The answer of a `/v1/…` route; undefined when the path is not the API's. */
export async function api(
  req: IncomingMessage,
  url: URL,
  ctx: ApiContext,
  signal: AbortSignal,
): Promise<{ result: unknown } | undefined> {
  const path = url.pathname;
  const method = req.method ?? '';
  if (path === '/v1/tools') {
    only(method, 'GET', path);
    await ctx.who(['executor', 'reviewer']);
    noBody(req);
    return { result: { tools: ctx.host.tools() } };
  }
  if (path === '/v1/tools/execute') {
    only(method, 'POST', path);
    await ctx.who(['executor']);
    const { toolId, input, options } = executeBody(await readJson(req));
    const { opts, capped } = capTier(checkCallOptions(options), ctx.executorMaxTier);
    ctx.line['tool'] = redactLogText(toolId).slice(0, 128);
    if (capped) ctx.line['cliTierCap'] = 'serve.executorMaxTier';
    const out: ToolOutput = await ctx.holder.run(toolId, input, opts, { signal });
    ctx.line['runId'] = out.runId;
    return { result: out };
  }
  if (path === '/v1/approvals') {
    only(method, 'GET', path);
    await ctx.who(['reviewer', 'executor']);
    noBody(req);
    const list = await ctx.store.listApprovals(approvalQuery(url.searchParams));
    return { result: { approvals: list.map(approvalView) } };
  }
  const m = APPROVAL_RE.exec(path);
  if (m) {
    const id = approvalId(m[1]!);
    ctx.line['approvalId'] = id;
    if (!m[2]) {
      only(method, 'GET', path);
      await ctx.who(['reviewer', 'executor']);
      noBody(req);
      const a = await ctx.store.getApproval(id);
      if (!a) throw brokerError('APPROVAL_NOT_FOUND', { id }, { details: { approvalId: id } });
      return { result: approvalView(a) };
    }
    only(method, 'POST', path);
    if (m[2] === 'resume') return { result: await resume(req, ctx, id, signal) };
    const caller = await ctx.who(['reviewer']);
    const body = await readJson(req);
    if (body !== undefined && !(isObject(body) && Object.keys(body).length === 0))
      throw new ServeRefusal(400, `${m[2]} takes no body (or {}): the reviewer is the token's name`);
    ctx.line['by'] = caller.who;
    return { result: await decide(ctx, id, m[2] as 'approve' | 'reject', caller.who) };
  }
  if (path === '/v1/audit') {
    only(method, 'GET', path);
    await ctx.who(['reviewer', 'executor']);
    noBody(req);
    const q = auditQuery(url.searchParams);
    const events = await ctx.store.listEvents(q);
    const next = events.length === q.limit ? events.at(-1)?.seq : undefined;
    return { result: { events, ...(next !== undefined ? { next } : {}) } };
  }
  return undefined;
}
