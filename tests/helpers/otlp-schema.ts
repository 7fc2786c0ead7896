/**
 * A structural validator of OTLP logs in the JSON encoding (opentelemetry-proto
 * `ExportLogsServiceRequest`, logs/v1 with `eventName`, encoded as the OTLP/HTTP JSON rules
 * say): every message's fields by their lowerCamelCase names and nothing else; 64-bit integers
 * (`fixed64` times, `int64` intValue) as decimal strings; enums (`severityNumber`) as
 * integers in their range; `traceId` / `spanId` as hex of 16 / 8 bytes (not base64); bytes as
 * base64; `AnyValue` exactly one of its oneof; attribute keys unique within a list.
 *
 * Returns the problems found, each with its JSON path; an empty list is a valid message.
 */

// biome-ignore lint/suspicious/noExplicitAny: walks any JSON
type Json = any;

const U64_MAX = 18_446_744_073_709_551_615n;
const I64_MIN = -9_223_372_036_854_775_808n;
const I64_MAX = 9_223_372_036_854_775_807n;

class Problems {
  readonly list: string[] = [];
  add(path: string, what: string): void {
    this.list.push(`${path}: ${what}`);
  }
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An object with only `known` fields; false (and a problem) when not an object. */
function message(
  v: unknown,
  path: string,
  known: readonly string[],
  out: Problems,
): v is Record<string, Json> {
  if (!isObj(v)) {
    out.add(path, 'not a JSON object');
    return false;
  }
  for (const k of Object.keys(v))
    if (!known.includes(k)) out.add(`${path}.${k}`, 'not a field of the message');
  return true;
}

function repeated(v: unknown, path: string, out: Problems, each: (x: unknown, p: string) => void): void {
  if (v === undefined) return;
  if (!Array.isArray(v)) {
    out.add(path, 'a repeated field is a JSON array');
    return;
  }
  for (const [i, x] of v.entries()) each(x, `${path}[${i}]`);
}

function str(v: unknown, path: string, out: Problems): void {
  if (v !== undefined && typeof v !== 'string') out.add(path, 'a string');
}

/** A proto3 64-bit integer as JSON: a decimal string in range (the OTLP encoders write strings). */
function int64(v: unknown, path: string, out: Problems, unsigned: boolean): void {
  if (v === undefined) return;
  if (typeof v !== 'string' || !/^-?(0|[1-9][0-9]*)$/.test(v)) {
    out.add(path, 'a 64-bit integer as a decimal string');
    return;
  }
  const n = BigInt(v);
  if (unsigned ? n < 0n || n > U64_MAX : n < I64_MIN || n > I64_MAX) out.add(path, 'out of the 64-bit range');
}

/** A proto3 32-bit unsigned integer (or fixed32): a JSON number. */
function uint32(v: unknown, path: string, out: Problems): void {
  if (v === undefined) return;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffff_ffff)
    out.add(path, 'a 32-bit unsigned integer');
}

function hexId(v: unknown, path: string, bytes: number, out: Problems): void {
  if (v === undefined || v === '') return;
  if (typeof v !== 'string' || !new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`).test(v)) {
    out.add(path, `${bytes} bytes as hex (${bytes * 2} hex digits), not base64`);
    return;
  }
  if (/^0+$/.test(v)) out.add(path, 'an all-zero id is invalid');
}

const ANY_VALUE_FIELDS = [
  'stringValue',
  'boolValue',
  'intValue',
  'doubleValue',
  'arrayValue',
  'kvlistValue',
  'bytesValue',
] as const;

function anyValue(v: unknown, path: string, out: Problems): void {
  if (!message(v, path, ANY_VALUE_FIELDS, out)) return;
  const set = ANY_VALUE_FIELDS.filter((k) => v[k] !== undefined);
  if (set.length !== 1) {
    out.add(path, `exactly one of the AnyValue oneof (found ${set.length})`);
    return;
  }
  const k = set[0]!;
  const x = v[k];
  switch (k) {
    case 'stringValue':
      str(x, `${path}.stringValue`, out);
      return;
    case 'boolValue':
      if (typeof x !== 'boolean') out.add(`${path}.boolValue`, 'a JSON boolean');
      return;
    case 'intValue':
      int64(x, `${path}.intValue`, out, false);
      return;
    case 'doubleValue':
      if (typeof x !== 'number' && !['NaN', 'Infinity', '-Infinity'].includes(x))
        out.add(`${path}.doubleValue`, 'a JSON number');
      return;
    case 'bytesValue':
      if (typeof x !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(x))
        out.add(`${path}.bytesValue`, 'base64');
      return;
    case 'arrayValue':
      if (message(x, `${path}.arrayValue`, ['values'], out))
        repeated(x['values'], `${path}.arrayValue.values`, out, (y, p) => anyValue(y, p, out));
      return;
    case 'kvlistValue':
      if (message(x, `${path}.kvlistValue`, ['values'], out))
        keyValues(x['values'], `${path}.kvlistValue.values`, out);
      return;
  }
}

function keyValues(v: unknown, path: string, out: Problems): void {
  const seen = new Set<string>();
  repeated(v, path, out, (kv, p) => {
    if (!message(kv, p, ['key', 'value'], out)) return;
    if (typeof kv['key'] !== 'string' || kv['key'] === '') out.add(`${p}.key`, 'a non-empty string');
    else if (seen.has(kv['key'])) out.add(`${p}.key`, `duplicate attribute key ${kv['key']}`);
    else seen.add(kv['key']);
    if (kv['value'] === undefined) out.add(`${p}.value`, 'required');
    else anyValue(kv['value'], `${p}.value`, out);
  });
}

function attributesOf(m: Record<string, Json>, path: string, out: Problems): void {
  keyValues(m['attributes'], `${path}.attributes`, out);
  uint32(m['droppedAttributesCount'], `${path}.droppedAttributesCount`, out);
}

/** SeverityNumber's range (0 unspecified, 1..24) and the text of each band of four. */
const SEVERITY_BANDS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'];

function logRecord(v: unknown, path: string, out: Problems): void {
  const fields = [
    'timeUnixNano',
    'observedTimeUnixNano',
    'severityNumber',
    'severityText',
    'body',
    'attributes',
    'droppedAttributesCount',
    'flags',
    'traceId',
    'spanId',
    'eventName',
  ];
  if (!message(v, path, fields, out)) return;
  int64(v['timeUnixNano'], `${path}.timeUnixNano`, out, true);
  int64(v['observedTimeUnixNano'], `${path}.observedTimeUnixNano`, out, true);
  const sev = v['severityNumber'];
  if (sev !== undefined && (!Number.isInteger(sev) || sev < 0 || sev > 24))
    out.add(`${path}.severityNumber`, 'an integer 0..24 (enums are integers in OTLP/JSON)');
  str(v['severityText'], `${path}.severityText`, out);
  if (Number.isInteger(sev) && sev >= 1 && sev <= 24 && typeof v['severityText'] === 'string') {
    const band = SEVERITY_BANDS[Math.floor((sev - 1) / 4)]!;
    if (!v['severityText'].startsWith(band))
      out.add(`${path}.severityText`, `${band}… for severityNumber ${sev}`);
  }
  if (v['body'] !== undefined) anyValue(v['body'], `${path}.body`, out);
  attributesOf(v, path, out);
  uint32(v['flags'], `${path}.flags`, out);
  hexId(v['traceId'], `${path}.traceId`, 16, out);
  hexId(v['spanId'], `${path}.spanId`, 8, out);
  str(v['eventName'], `${path}.eventName`, out);
}

/** The problems of `v` as an OTLP `ExportLogsServiceRequest` in the JSON encoding; [] when valid. */
export function otlpLogsProblems(v: unknown): string[] {
  const out = new Problems();
  if (!message(v, '$', ['resourceLogs'], out)) return out.list;
  repeated(v['resourceLogs'], '$.resourceLogs', out, (rl, p) => {
    if (!message(rl, p, ['resource', 'scopeLogs', 'schemaUrl'], out)) return;
    if (
      rl['resource'] !== undefined &&
      message(rl['resource'], `${p}.resource`, ['attributes', 'droppedAttributesCount', 'entityRefs'], out)
    )
      attributesOf(rl['resource'], `${p}.resource`, out);
    str(rl['schemaUrl'], `${p}.schemaUrl`, out);
    repeated(rl['scopeLogs'], `${p}.scopeLogs`, out, (sl, q) => {
      if (!message(sl, q, ['scope', 'logRecords', 'schemaUrl'], out)) return;
      const scope = sl['scope'];
      if (
        scope !== undefined &&
        message(scope, `${q}.scope`, ['name', 'version', 'attributes', 'droppedAttributesCount'], out)
      ) {
        str(scope['name'], `${q}.scope.name`, out);
        str(scope['version'], `${q}.scope.version`, out);
        attributesOf(scope, `${q}.scope`, out);
      }
      str(sl['schemaUrl'], `${q}.schemaUrl`, out);
      repeated(sl['logRecords'], `${q}.logRecords`, out, (r, s) => logRecord(r, s, out));
    });
  });
  return out.list;
}
