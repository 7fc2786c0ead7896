/**
 * The format validators the export and push tests rely on can fail: an export of each kind
 * passes, and each rule broken in a copy of it is named. (A validator that passes anything
 * would make those tests unable to fail.)
 */
import t from 'tap';
import type { ChainRow } from '../../src/store/chain.js';
import { otlpLogsRequest, toOcsf } from '../../src/store/export.js';
import { ocsfProblems } from '../helpers/ocsf-schema.js';
import { otlpLogsProblems } from '../helpers/otlp-schema.js';
import { blocked, egress, execution } from './fixtures/index.js';

// biome-ignore lint/suspicious/noExplicitAny: mutated JSON copies
type Json = any;

function row(seq: number, event: object): ChainRow {
  const data = JSON.stringify(event);
  const e = event as { type: string; time: string };
  return {
    seq,
    type: e.type,
    time: e.time,
    time_ms: Date.parse(e.time),
    run_id: 'run-1',
    extension_id: 'github',
    decision: null,
    data,
    prev_hash: seq > 1 ? 'a'.repeat(64) : null,
    hash: 'b'.repeat(64),
  };
}

const rows = [row(1, egress({ method: 'GET' })), row(2, blocked({ method: 'PATCH' })), row(3, execution())];
const copy = (v: unknown): Json => structuredClone(v);

t.test('the exports pass', async (t) => {
  t.same(otlpLogsProblems(otlpLogsRequest(rows)), []);
  for (const r of rows) t.same(ocsfProblems(toOcsf(r)), [], r.type);
});

const otlpBroken: [name: string, mutate: (o: Json) => void, names: RegExp][] = [
  ['time as a number', (o) => (rec(o).timeUnixNano = 1), /timeUnixNano/],
  ['a severity out of range', (o) => (rec(o).severityNumber = 25), /severityNumber/],
  ['a severity as its name', (o) => (rec(o).severityNumber = 'SEVERITY_NUMBER_INFO'), /severityNumber/],
  ['text not matching the number', (o) => (rec(o).severityText = 'ERROR'), /severityText/],
  ['an AnyValue with two values', (o) => (rec(o).body = { stringValue: 'x', intValue: '1' }), /exactly one/],
  ['an int64 as a number', (o) => (rec(o).attributes[1].value = { intValue: 1 }), /intValue/],
  ['a duplicate key', (o) => rec(o).attributes.push(copy(rec(o).attributes[0])), /duplicate/],
  ['a base64 trace id', (o) => (rec(o).traceId = 'AAECAwQFBgcICQoLDA0ODw=='), /traceId/],
  ['a short span id', (o) => (rec(o).spanId = 'abcd'), /spanId/],
  ['a snake_case field', (o) => (rec(o).time_unix_nano = '1'), /time_unix_nano/],
  ['logRecords not an array', (o) => (o.resourceLogs[0].scopeLogs[0].logRecords = {}), /logRecords/],
];

function rec(o: Json): Json {
  return o.resourceLogs[0].scopeLogs[0].logRecords[0];
}

t.test('OTLP: each broken rule is named', async (t) => {
  t.plan(otlpBroken.length);
  for (const [name, mutate, names] of otlpBroken) {
    const o = copy(otlpLogsRequest(rows));
    mutate(o);
    t.match(otlpLogsProblems(o).join('\n'), names, name);
  }
});

const ocsfBroken: [name: string, at: number, mutate: (o: Json) => void, names: RegExp][] = [
  ['no time', 0, (o) => delete o.time, /time: required/],
  ['time as a string', 0, (o) => (o.time = '2030-01-01T00:00:00Z'), /time: a timestamp/],
  ['a wrong type_uid', 0, (o) => (o.type_uid = 400200), /type_uid/],
  ['a wrong category', 0, (o) => (o.category_uid = 6), /category_uid/],
  [
    'an activity outside the class',
    0,
    (o) => {
      o.activity_id = 9;
      o.type_uid = 400209;
    },
    /activity_id: 9/,
  ],
  ['a caption not its id', 0, (o) => (o.severity = 'High'), /severity: "High"/],
  ['no product', 0, (o) => delete o.metadata.product, /metadata.product/],
  ['no version', 0, (o) => delete o.metadata.version, /metadata.version/],
  ['a response without a code', 0, (o) => (o.http_response = {}), /http_response.code/],
  ['an attribute the class lacks', 0, (o) => (o.actor = { invoked_by: 'x' }), /actor: not an attribute/],
  ['a profile attribute without the profile', 1, (o) => (o.metadata.profiles = []), /security_control/],
  ['API Activity without its actor', 2, (o) => delete o.actor, /actor: required/],
  ['API Activity without api.operation', 2, (o) => (o.api = { service: { name: 'x' } }), /api.operation/],
  ['API Activity with an empty source', 2, (o) => (o.src_endpoint = {}), /src_endpoint/],
];

t.test('OCSF: each broken rule is named', async (t) => {
  t.plan(ocsfBroken.length);
  for (const [name, at, mutate, names] of ocsfBroken) {
    const o = copy(toOcsf(rows[at]!));
    mutate(o);
    t.match(ocsfProblems(o).join('\n'), names, name);
  }
});
