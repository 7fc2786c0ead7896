/**
 * `clibroker audit query`: the audit trail in the store — egress decisions, run outcomes
 * and tier changes — filtered by run, time range, decision and type, paged by seq. The store loads only
 * when the command runs; the event types are listed here as literals so `--help` needs no
 * back-end (a test checks they equal the store's STORE_EVENT_TYPES).
 */
import { defineTool } from '../define.js';
import { fail } from '../envelope.js';
import { configParam, storeParam } from './common.js';

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
    limit: {
      type: 'number',
      integer: true,
      min: 1,
      max: 10000,
      default: 100,
      describe: 'at most this many, 1..10000',
    },
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
    const { withStore, storeFlag } = await import('../store-flag.js');
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
    if (p.format === 'table') return (await import('../audit-table.js')).auditTable(events);
    return { events };
  },
});
