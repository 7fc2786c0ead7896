/**
 * A validator of the two OCSF 1.3.0 classes the audit export writes, HTTP Activity (4002) and
 * API Activity (6003), from the schema's rules:
 *
 * - the base event's required attributes: `activity_id`, `category_uid`, `class_uid`,
 *   `metadata` (with its required `product` — `vendor_name` required there — and `version`),
 *   `severity_id`, `time` (timestamp_t: integer epoch milliseconds) and `type_uid`
 *   (= class_uid × 100 + activity_id);
 * - each enum id in its enumeration (activity per class, severity, status, and the
 *   security-control profile's action and disposition), a caption that is present matching
 *   its id (99 Other excepted), `type_name` as "<class_name>: <activity_name>";
 * - API Activity's required `actor` (at least one of its identifying attributes), `api` (with
 *   its required `operation`) and `src_endpoint` (a network endpoint naming something);
 * - `http_response.code` required when `http_response` is present; a profile's attributes
 *   only with that profile named in `metadata.profiles`;
 * - no top-level attribute the class (with the security-control profile) does not define.
 *
 * - HTTP Activity's required `http_request`, `http_response` (with its required `code`) and
 *   `dst_endpoint` (required by Network Activity, the class it extends); a `url`, when given,
 *   with at least one of `url_string` and `path`.
 *
 * The required attributes are the ones the schema's 1.3.0 release marks `"requirement":
 * "required"` (events/base_event.json with includes/classification.json and occurrence.json,
 * events/network/network.json and http.json, events/application/api.json, and the objects
 * metadata, product, http_response, api, actor, endpoint and url). What the export promises
 * beyond them (`status_id` on every event) is checked by the export test itself.
 * Returns the problems found; [] for a valid event.
 */

// biome-ignore lint/suspicious/noExplicitAny: walks any JSON
type Json = any;

export const OCSF_VERSION = '1.3.0';

const BASE_ATTRIBUTES = [
  'activity_id',
  'activity_name',
  'category_name',
  'category_uid',
  'class_name',
  'class_uid',
  'count',
  'duration',
  'end_time',
  'enrichments',
  'message',
  'metadata',
  'observables',
  'raw_data',
  'severity',
  'severity_id',
  'start_time',
  'status',
  'status_code',
  'status_detail',
  'status_id',
  'time',
  'timezone_offset',
  'type_name',
  'type_uid',
  'unmapped',
];
const SECURITY_CONTROL = [
  'action',
  'action_id',
  'disposition',
  'disposition_id',
  'attacks',
  'authorizations',
  'firewall_rule',
  'malware',
  'policy',
];

interface ClassRule {
  category: [number, string];
  name: string;
  activities: Record<number, string>;
  attributes: string[];
  required: string[];
}

const CLASSES: Record<number, ClassRule> = {
  4002: {
    category: [4, 'Network Activity'],
    name: 'HTTP Activity',
    activities: {
      0: 'Unknown',
      1: 'Connect',
      2: 'Delete',
      3: 'Get',
      4: 'Head',
      5: 'Options',
      6: 'Post',
      7: 'Put',
      8: 'Trace',
    },
    attributes: [
      'http_request',
      'http_response',
      'http_status',
      'http_cookies',
      'dst_endpoint',
      'src_endpoint',
      'connection_info',
      'proxy',
      'tls',
      'traffic',
      'file',
      'app_name',
    ],
    // http.json requires the request and the response; network.json, the class it extends, dst_endpoint
    required: ['http_request', 'http_response', 'dst_endpoint'],
  },
  6003: {
    category: [6, 'Application Activity'],
    name: 'API Activity',
    activities: { 0: 'Unknown', 1: 'Create', 2: 'Read', 3: 'Update', 4: 'Delete' },
    attributes: ['actor', 'api', 'dst_endpoint', 'http_request', 'resources', 'src_endpoint'],
    required: ['actor', 'api', 'src_endpoint'],
  },
};

const SEVERITY: Record<number, string> = {
  0: 'Unknown',
  1: 'Informational',
  2: 'Low',
  3: 'Medium',
  4: 'High',
  5: 'Critical',
  6: 'Fatal',
};
const STATUS: Record<number, string> = { 0: 'Unknown', 1: 'Success', 2: 'Failure' };
const ACTION: Record<number, string> = {
  0: 'Unknown',
  1: 'Allowed',
  2: 'Denied',
  3: 'Observed',
  4: 'Modified',
};
/** the dispositions the export uses, and the ids OCSF 1.3.0 defines (1..27) */
const DISPOSITION_CAPTIONS: Record<number, string> = { 0: 'Unknown', 1: 'Allowed', 2: 'Blocked' };

function isObj(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An enum attribute: its id in the enumeration (or 99 Other), its caption (if present) matching. */
function enumOf(
  e: Record<string, Json>,
  id: string,
  caption: string,
  values: Record<number, string>,
  out: string[],
  openRange?: (n: number) => boolean,
): void {
  const v = e[id];
  if (v === undefined) return;
  if (!Number.isInteger(v) || !(v in values || v === 99 || openRange?.(v)))
    return void out.push(`${id}: ${v} is not in its enumeration`);
  const c = e[caption];
  if (c !== undefined && typeof c !== 'string') out.push(`${caption}: a string`);
  else if (c !== undefined && v !== 99 && values[v] !== undefined && c !== values[v])
    out.push(`${caption}: "${c}" is not the caption of ${id} ${v} ("${values[v]}")`);
}

function endpointNames(v: unknown): boolean {
  return (
    isObj(v) &&
    [
      'ip',
      'uid',
      'name',
      'hostname',
      'instance_uid',
      'interface_uid',
      'interface_name',
      'domain',
      'svc_name',
    ].some((k) => typeof v[k] === 'string' && v[k] !== '')
  );
}

/** The problems of `e` as an OCSF 1.3.0 HTTP Activity or API Activity event; [] when valid. */
export function ocsfProblems(e: unknown): string[] {
  const out: string[] = [];
  if (!isObj(e)) return ['not a JSON object'];
  for (const k of ['activity_id', 'category_uid', 'class_uid', 'metadata', 'severity_id', 'time', 'type_uid'])
    if (e[k] === undefined) out.push(`${k}: required`);
  const rule = CLASSES[e['class_uid']];
  if (!rule) return [...out, `class_uid: ${e['class_uid']} is not 4002 or 6003`];
  const allowed = new Set([...BASE_ATTRIBUTES, ...rule.attributes, ...SECURITY_CONTROL]);
  for (const k of Object.keys(e)) if (!allowed.has(k)) out.push(`${k}: not an attribute of ${rule.name}`);
  for (const k of rule.required) if (e[k] === undefined) out.push(`${k}: required by ${rule.name}`);

  if (e['category_uid'] !== rule.category[0])
    out.push(`category_uid: ${rule.name} is in category ${rule.category[0]}`);
  if (e['category_name'] !== undefined && e['category_name'] !== rule.category[1])
    out.push(`category_name: "${rule.category[1]}"`);
  if (e['class_name'] !== undefined && e['class_name'] !== rule.name) out.push(`class_name: "${rule.name}"`);
  enumOf(e, 'activity_id', 'activity_name', rule.activities, out);
  if (e['activity_id'] === 99 && typeof e['activity_name'] !== 'string')
    out.push('activity_name: required with activity_id 99 (Other)');
  if (e['type_uid'] !== e['class_uid'] * 100 + e['activity_id'])
    out.push('type_uid: class_uid * 100 + activity_id');
  if (e['type_name'] !== undefined && e['type_name'] !== `${rule.name}: ${e['activity_name']}`)
    out.push(`type_name: "${rule.name}: <activity_name>"`);
  enumOf(e, 'severity_id', 'severity', SEVERITY, out);
  enumOf(e, 'status_id', 'status', STATUS, out);
  if (!Number.isSafeInteger(e['time']) || e['time'] < 0)
    out.push('time: a timestamp, integer epoch milliseconds');
  for (const k of ['message', 'status_code', 'status_detail'])
    if (e[k] !== undefined && typeof e[k] !== 'string') out.push(`${k}: a string`);
  if (e['unmapped'] !== undefined && !isObj(e['unmapped'])) out.push('unmapped: an object');

  const m = e['metadata'];
  if (!isObj(m)) out.push('metadata: an object');
  else {
    if (typeof m['version'] !== 'string' || !/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/.test(m['version']))
      out.push('metadata.version: a semantic version');
    const p = m['product'];
    if (!isObj(p)) out.push('metadata.product: required');
    else if (typeof p['vendor_name'] !== 'string' || p['vendor_name'] === '')
      out.push('metadata.product.vendor_name: required');
    for (const k of ['uid', 'original_time', 'correlation_uid'])
      if (m[k] !== undefined && typeof m[k] !== 'string') out.push(`metadata.${k}: a string`);
    if (
      m['profiles'] !== undefined &&
      (!Array.isArray(m['profiles']) || m['profiles'].some((x: unknown) => typeof x !== 'string'))
    )
      out.push('metadata.profiles: an array of names');
  }
  const profiles: string[] = isObj(m) && Array.isArray(m['profiles']) ? m['profiles'] : [];
  if (SECURITY_CONTROL.some((k) => e[k] !== undefined) && !profiles.includes('security_control'))
    out.push('metadata.profiles: names security_control, whose attributes the event has');
  enumOf(e, 'action_id', 'action', ACTION, out);
  enumOf(e, 'disposition_id', 'disposition', DISPOSITION_CAPTIONS, out, (n) => n >= 0 && n <= 27);

  const req = e['http_request'];
  if (req !== undefined) {
    if (!isObj(req)) out.push('http_request: an object');
    else {
      if (req['http_method'] !== undefined && typeof req['http_method'] !== 'string')
        out.push('http_request.http_method: a string');
      const url = req['url'];
      if (url !== undefined && !isObj(url)) out.push('http_request.url: an object');
      else if (isObj(url) && url['url_string'] === undefined && url['path'] === undefined)
        out.push('http_request.url: at least one of url_string and path');
    }
  }
  const res = e['http_response'];
  if (res !== undefined && (!isObj(res) || !Number.isInteger(res['code'])))
    out.push('http_response.code: required, an integer');
  if (e['http_status'] !== undefined && !Number.isInteger(e['http_status']))
    out.push('http_status: an integer');
  for (const k of ['dst_endpoint', 'src_endpoint'])
    if (e[k] !== undefined && !endpointNames(e[k]))
      out.push(`${k}: a network endpoint with at least one of ip, uid, name, hostname, …`);

  if (rule.name === 'API Activity') {
    const api = e['api'];
    if (isObj(api) && (typeof api['operation'] !== 'string' || api['operation'] === ''))
      out.push('api.operation: required');
    if (api !== undefined && !isObj(api)) out.push('api: an object');
    const actor = e['actor'];
    if (
      actor !== undefined &&
      (!isObj(actor) ||
        !['process', 'user', 'invoked_by', 'session', 'app_name', 'app_uid'].some(
          (k) => actor[k] !== undefined,
        ))
    )
      out.push('actor: at least one of process, user, invoked_by, session, app_name, app_uid');
    if (e['resources'] !== undefined && (!Array.isArray(e['resources']) || !e['resources'].every(isObj)))
      out.push('resources: an array of resource details');
  }
  return out;
}
