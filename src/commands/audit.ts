/**
 * `clibroker audit query`, `verify`, `receipt` and `export`: the audit trail in the store — egress decisions, run outcomes
 * and tier changes — filtered by run, time range, decision and type, paged by seq. The store loads only
 * when the command runs; the event types are listed here as literals so `--help` needs no
 * back-end (a test checks they equal the store's STORE_EVENT_TYPES). `verify` walks the
 * trail's hash chain; `receipt` gathers one run into a document citing the chain's hashes;
 * `export` writes the trail as OCSF or OTLP JSON lines.
 */
import { defineTool } from '../cli/define.js';
import { fail } from '../cli/envelope.js';
import { configParam, limitParam, storeParam } from './common.js';

export const AUDIT_EVENT_TYPES = [
  'egress.allowed',
  'egress.blocked',
  'extension.execution.succeeded',
  'extension.execution.failed',
  'extension.cli_tier.raised',
  'extension.cli_tier.lowered',
  'store.events.pruned',
] as const;

function time(flag: string, v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  if (Number.isNaN(Date.parse(v)))
    fail('flag-parse', `--${flag} takes an ISO 8601 time`, {
      flag,
      got: v,
      expected: `--${flag} 2025-01-01T00:00:00Z`,
    });
  return v;
}

export const auditQuery = defineTool({
  namespace: 'audit',
  name: 'query',
  description:
    'Query the audit trail: egress.allowed/blocked per request, extension.execution.succeeded/failed per run (with cliTier and cliTierReason), tier changes.',
  parameters: {
    run: { type: 'string', optional: true, describe: 'only events of this run id' },
    since: { type: 'string', optional: true, describe: 'events at or after this ISO 8601 time' },
    until: { type: 'string', optional: true, describe: 'events before this ISO 8601 time' },
    decision: {
      type: 'enum',
      values: ['allow', 'deny'],
      optional: true,
      describe: 'only egress events with this decision',
    },
    type: {
      type: 'array',
      items: { type: 'enum', values: AUDIT_EVENT_TYPES },
      optional: true,
      describe: 'only events of these types (repeat the flag)',
    },
    extension: { type: 'string', optional: true, describe: 'only events of this extension id' },
    limit: limitParam,
    order: { type: 'enum', values: ['oldest', 'newest'], default: 'oldest', describe: 'by event time' },
    after: {
      type: 'number',
      integer: true,
      min: 1,
      optional: true,
      describe:
        'the next page: events after this seq (the last of the previous page, with the same filters and order)',
    },
    format: {
      type: 'enum',
      values: ['json', 'table'],
      default: 'json',
      describe: 'json: the events; table: one text table (read it with jq -r .data)',
    },
    store: storeParam,
    config: configParam,
  },
  examples: [
    { params: { decision: 'deny' }, comment: 'every refused request' },
    {
      params: { since: '2025-01-01T00:00:00Z', type: ['extension.execution.failed'], limit: 20 },
      comment: 'failed runs since New Year',
    },
  ],
  outputShape: '{events: {seq: number, event: {type, time, …}}[]} (format json) or string (format table)',
  async run(p) {
    const since = time('since', p.since);
    const until = time('until', p.until);
    const { withStore, storeFlag } = await import('./store-flag.js');
    const events = await withStore(storeFlag(p), false, (s) =>
      s.listEvents({
        limit: p.limit,
        order: p.order,
        ...(p.run ? { runId: p.run } : {}),
        ...(since ? { since } : {}),
        ...(until ? { until } : {}),
        ...(p.decision ? { decision: p.decision } : {}),
        ...(p.type?.length ? { type: p.type } : {}),
        ...(p.extension ? { extensionId: p.extension } : {}),
        ...(p.after !== undefined ? { after: p.after } : {}),
      }),
    );
    if (p.format === 'table') return (await import('../store/audit-table.js')).auditTable(events);
    return { events };
  },
});

export const auditVerify = defineTool({
  namespace: 'audit',
  name: 'verify',
  description:
    "Verify the audit trail's hash chain: ok with the number of events checked and the head hash (keep it elsewhere to check against later), or the first break with its seq and what broke (edited, deleted, reordered, unchained, truncated), exit 1.",
  parameters: {
    store: storeParam,
    config: configParam,
  },
  examples: [{ params: {}, comment: 'check the trail has not been edited' }],
  outputShape:
    '{ok: true, events: number, unchained: number, first?: number, last?: number, head: string | null}',
  async run(p) {
    return (await import('./audit-chain.js')).verifyCommand(p);
  },
});

export const auditReceipt = defineTool({
  namespace: 'audit',
  name: 'receipt',
  description:
    "One run's receipt: the tool, the argv digest, cliTier and its reason, every request with class, decision and reason, every approval and who decided it, with the chain hashes of the events it is built from.",
  parameters: {
    run: { type: 'string', cliPositional: true, describe: 'the run id (a call result names it)' },
    store: storeParam,
    config: configParam,
  },
  examples: [{ params: { run: '2b1c9a0e-5f4d-4c3b-9a8e-7d6c5b4a3f21' }, comment: 'what one call did' }],
  outputShape:
    '{runId, tool?, argvDigest?, cliTier?, cliTierReason?, outcome?, calls: [], requests: [], approvals: [], chain: {head: {seq, hash}, eventsMatch}}',
  async run(p) {
    return (await import('./audit-chain.js')).receiptCommand(p);
  },
});

export const auditExport = defineTool({
  namespace: 'audit',
  name: 'export',
  description:
    'Export the audit trail as JSON lines for security tooling: OCSF 1.3.0 (HTTP Activity 4002 per request, API Activity 6003 per call, tier change and prune) or OTLP logs (one ExportLogsServiceRequest per line), each with its seq and chain hashes.',
  parameters: {
    format: { type: 'enum', values: ['ocsf', 'otlp'], describe: 'ocsf or otlp' },
    run: { type: 'string', optional: true, describe: 'only events of this run id' },
    since: { type: 'string', optional: true, describe: 'events at or after this ISO 8601 time' },
    until: { type: 'string', optional: true, describe: 'events before this ISO 8601 time' },
    out: {
      type: 'string',
      optional: true,
      describe:
        'write the lines to this file (mode 0600); else they are the answer (read them with jq -r .data.jsonl)',
    },
    store: storeParam,
    config: configParam,
  },
  examples: [{ params: { format: 'ocsf', out: 'audit.ocsf.jsonl' }, comment: 'for a SIEM that reads OCSF' }],
  outputShape: '{format, events: number, file?: string, jsonl?: string}',
  async run(p) {
    const since = time('since', p.since);
    const until = time('until', p.until);
    return (await import('./audit-chain.js')).exportCommand({ ...p, since, until });
  },
});
