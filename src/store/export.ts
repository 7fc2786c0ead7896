/**
 * The audit trail in the shapes security tooling reads (docs/audit.md, "Export"): one JSON
 * object per stored event, as an OCSF event or as an OTLP logs request. Each carries the
 * event's seq and chain hashes, so an exported copy can be checked against the store.
 *
 * OCSF 1.3.0: an egress request is HTTP Activity (class 4002, with the security-control
 * profile's action and disposition); a call's outcome, a tier change and a prune are API
 * Activity (class 6003) of clibroker itself. OTLP: the JSON encoding of an
 * ExportLogsServiceRequest with one log record, the form an OpenTelemetry collector's
 * OTLP JSON file receiver reads line by line.
 */
import type { ChainRow } from './chain.js';
import type { EgressEvent, StoreEvent } from './types.js';

export type ExportFormat = 'ocsf' | 'otlp';

const OCSF_VERSION = '1.3.0';
const PRODUCT = { name: 'clibroker', vendor_name: 'clibroker' };

/** HTTP Activity's activity_id per method; anything else is 99 (Other) with its name. */
const HTTP_ACTIVITY: Readonly<Record<string, [number, string]>> = {
  CONNECT: [1, 'Connect'],
  DELETE: [2, 'Delete'],
  GET: [3, 'Get'],
  HEAD: [4, 'Head'],
  OPTIONS: [5, 'Options'],
  POST: [6, 'Post'],
  PUT: [7, 'Put'],
  TRACE: [8, 'Trace'],
};

/** What the chain says of the event, carried in both formats. */
function chainOf(row: ChainRow) {
  return { seq: row.seq, hash: row.hash, prev_hash: row.prev_hash };
}

/** OCSF's http_response: the vendor's status, else the broker's refusal status, else 0 (no answer). */
function httpResponse(e: EgressEvent): { code: number; message?: string } {
  if (e.status !== undefined) return { code: e.status };
  if (e.refusalStatus !== undefined) return { code: e.refusalStatus, message: 'answered by clibroker' };
  return { code: 0, message: 'no answer: the request was cut off before one came' };
}

function ocsfEgress(row: ChainRow, e: EgressEvent): Record<string, unknown> {
  const [activityId, activityName] = HTTP_ACTIVITY[e.method.toUpperCase()] ?? [
    99,
    e.method.charAt(0).toUpperCase() + e.method.slice(1).toLowerCase(),
  ];
  const allowed = e.decision === 'allow';
  const sent = allowed && e.outcome === 'sent';
  const runId = e.labels?.['runId'];
  return {
    activity_id: activityId,
    activity_name: activityName,
    category_uid: 4,
    category_name: 'Network Activity',
    class_uid: 4002,
    class_name: 'HTTP Activity',
    type_uid: 4002 * 100 + activityId,
    type_name: `HTTP Activity: ${activityName}`,
    severity_id: allowed ? 1 : 3,
    severity: allowed ? 'Informational' : 'Medium',
    time: row.time_ms,
    message: e.reason,
    metadata: {
      version: OCSF_VERSION,
      product: PRODUCT,
      profiles: ['security_control'],
      uid: String(row.seq),
      original_time: e.time,
      ...(runId ? { correlation_uid: runId } : {}),
    },
    dst_endpoint: { hostname: e.host },
    http_request: {
      http_method: e.method,
      url: { scheme: 'https', hostname: e.host, path: e.path, url_string: `https://${e.host}${e.path}` },
    },
    // the answer the child got: the vendor's, else the broker's own refusal; 0 when none came
    // (the request was cut off first): OCSF requires a response on every HTTP Activity
    http_response: httpResponse(e),
    ...(e.status !== undefined ? { http_status: e.status } : {}),
    action_id: allowed ? 1 : 2,
    action: allowed ? 'Allowed' : 'Denied',
    disposition_id: allowed ? 1 : 2,
    disposition: allowed ? 'Allowed' : 'Blocked',
    status_id: sent ? 1 : 2,
    status: sent ? 'Success' : 'Failure',
    ...(e.code || e.policyCode ? { status_code: e.policyCode ?? e.code } : {}),
    status_detail: e.reason,
    unmapped: { clibroker: { ...chainOf(row), event: e } },
  };
}

/** API Activity (6003) of clibroker itself: a call's outcome, a tier change, a prune. */
function ocsfApi(row: ChainRow, e: Exclude<StoreEvent, EgressEvent>): Record<string, unknown> {
  let activity: [number, string];
  let who: string | undefined;
  let resource: Record<string, string>;
  let ok = true;
  switch (e.type) {
    case 'extension.execution.succeeded':
    case 'extension.execution.failed':
      activity = [99, 'Execute'];
      resource = { type: 'cli', uid: `${e.extensionId}:cli:${e.cliId ?? '-'}`, name: e.cliId ?? '-' };
      ok = e.type === 'extension.execution.succeeded';
      break;
    case 'extension.cli_tier.raised':
    case 'extension.cli_tier.lowered':
      activity = [3, 'Update'];
      who = e.who;
      resource = { type: 'cli_tier', uid: `${e.extensionId}/${e.assignmentId}/${e.cliId}`, name: e.cliId };
      break;
    case 'store.events.pruned':
      activity = [4, 'Delete'];
      who = e.who;
      resource = { type: 'audit_events', uid: `before:${e.before}`, name: 'audit_events' };
      break;
  }
  const runId = 'runId' in e ? e.runId : undefined;
  return {
    activity_id: activity[0],
    activity_name: activity[1],
    category_uid: 6,
    category_name: 'Application Activity',
    class_uid: 6003,
    class_name: 'API Activity',
    type_uid: 6003 * 100 + activity[0],
    type_name: `API Activity: ${activity[1]}`,
    severity_id: ok ? 1 : 2,
    severity: ok ? 'Informational' : 'Low',
    time: row.time_ms,
    metadata: {
      version: OCSF_VERSION,
      product: PRODUCT,
      uid: String(row.seq),
      original_time: e.time,
      ...(runId ? { correlation_uid: runId } : {}),
    },
    actor: { invoked_by: 'clibroker', ...(who ? { user: { name: who } } : {}) },
    api: { operation: e.type, service: { name: 'clibroker' } },
    src_endpoint: { name: 'clibroker' },
    resources: [resource],
    status_id: ok ? 1 : 2,
    status: ok ? 'Success' : 'Failure',
    ...('code' in e && e.code ? { status_code: e.code } : {}),
    unmapped: { clibroker: { ...chainOf(row), event: e } },
  };
}

/** The OCSF event of a stored event. */
export function toOcsf(row: ChainRow): Record<string, unknown> {
  const e = JSON.parse(row.data) as StoreEvent;
  if (e.type === 'egress.allowed' || e.type === 'egress.blocked') return ocsfEgress(row, e as EgressEvent);
  return ocsfApi(row, e as Exclude<StoreEvent, EgressEvent>);
}

type AnyValue = { stringValue: string } | { intValue: string } | { boolValue: boolean };

function attr(key: string, value: string | number | boolean | null | undefined) {
  if (value === undefined || value === null) return [];
  const v: AnyValue =
    typeof value === 'number'
      ? { intValue: String(value) }
      : typeof value === 'boolean'
        ? { boolValue: value }
        : { stringValue: value };
  return [{ key, value: v }];
}

/** OTLP severity: INFO (9) for what went as asked, WARN (13) for a refusal or a failed call. */
function severityOf(e: StoreEvent): [number, string] {
  const bad = e.type === 'egress.blocked' || e.type === 'extension.execution.failed';
  return bad ? [13, 'WARN'] : [9, 'INFO'];
}

/** The OTLP log record (JSON encoding) of a stored event. */
export function otlpLogRecord(row: ChainRow): Record<string, unknown> {
  const e = JSON.parse(row.data) as StoreEvent;
  const [severityNumber, severityText] = severityOf(e);
  const nanos = `${BigInt(row.time_ms) * 1_000_000n}`;
  const egress = e.type === 'egress.allowed' || e.type === 'egress.blocked' ? e : undefined;
  return {
    timeUnixNano: nanos,
    observedTimeUnixNano: nanos,
    severityNumber,
    severityText,
    eventName: e.type,
    body: { stringValue: row.data },
    attributes: [
      ...attr('event.name', e.type),
      ...attr('clibroker.seq', row.seq),
      ...attr('clibroker.hash', row.hash),
      ...attr('clibroker.prev_hash', row.prev_hash),
      ...attr('clibroker.run_id', row.run_id),
      ...attr('clibroker.extension_id', row.extension_id),
      ...attr('clibroker.decision', row.decision),
      ...(egress
        ? [
            ...attr('http.request.method', egress.method),
            ...attr('server.address', egress.host),
            ...attr('url.path', egress.path),
            ...attr('http.response.status_code', egress.status),
            ...attr('clibroker.class', egress.class),
            ...attr('clibroker.reason', egress.reason),
          ]
        : []),
    ],
  };
}

/**
 * An OTLP ExportLogsServiceRequest (JSON encoding) holding the log records of `rows`, in the
 * order given: one line of `audit export --format otlp` (one row), or one batch pushed to a
 * collector (docs/audit.md, "Push to a collector").
 */
export function otlpLogsRequest(rows: readonly ChainRow[]): Record<string, unknown> {
  return {
    resourceLogs: [
      {
        resource: { attributes: [...attr('service.name', 'clibroker')] },
        scopeLogs: [{ scope: { name: 'clibroker.audit' }, logRecords: rows.map(otlpLogRecord) }],
      },
    ],
  };
}

/** An OTLP ExportLogsServiceRequest (JSON encoding) holding the log record of a stored event. */
export function toOtlp(row: ChainRow): Record<string, unknown> {
  return otlpLogsRequest([row]);
}

/** One line of the export: the event in `format`, as JSON. */
export function exportLine(row: ChainRow, format: ExportFormat): string {
  return JSON.stringify(format === 'ocsf' ? toOcsf(row) : toOtlp(row));
}
