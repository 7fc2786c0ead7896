/**
 * `clibroker audit export --format ocsf|otlp` on both backends: one JSON line per stored
 * event, in seq order, each with the fields its format requires — OCSF's classification,
 * time and metadata, HTTP Activity's request and endpoint, API Activity's actor, api and
 * source; OTLP's resource, scope and log record — and the event's seq and chain hash. Every
 * line also passes the format's validator (tests/helpers/ocsf-schema.ts: OCSF 1.3.0;
 * tests/helpers/otlp-schema.ts: the OTLP logs JSON encoding).
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { BUNDLED_TOOLS } from '../../src/commands/index.js';
import type { Store } from '../../src/store/types.js';
import { runCli, testCli } from '../cli/fixtures/helpers.js';
import { ocsfProblems } from '../helpers/ocsf-schema.js';
import { otlpLogsProblems } from '../helpers/otlp-schema.js';
import { BACKENDS, freshStore } from './fixtures/backends.js';
import { blocked, egress, execution, tempDir } from './fixtures/index.js';

const cli = testCli(BUNDLED_TOOLS);
// biome-ignore lint/suspicious/noExplicitAny: parsed JSON lines, walked by the assertions
type Json = Record<string, any>;

/**
 * One of each kind: GET allowed, PATCH refused (the broker's own 422, as the engine records a
 * refusal: `refusalStatus`, no vendor status), a failed call, a tier change, a prune, and a
 * GET the child cut off before any answer came.
 */
async function fill(store: Store): Promise<void> {
  await store.appendEvent(egress({ method: 'GET' }));
  await store.appendEvent(
    blocked({
      method: 'PATCH',
      path: '/repos/acme/app',
      policyCode: 'CLI_REQUEST_TIER_DENIED',
      status: undefined,
      refusalStatus: 422,
    }),
  );
  await store.appendEvent(execution({ type: 'extension.execution.failed', code: 'CLI_REQUEST_TIER_DENIED' }));
  await store.setAssignmentTier({
    extensionId: 'github',
    assignmentId: 'default',
    cliId: 'gh',
    tier: 'write',
    who: 'ops@example.com',
  });
  await store.pruneEvents({ before: '2000-01-01T00:00:00Z', dryRun: false, who: 'ops@example.com' });
  await store.appendEvent(egress({ status: undefined, outcome: 'unknown', abortedBy: 'child' }));
}

async function exported(t: Test, location: string, format: string): Promise<Json[]> {
  const file = join(tempDir(t), `audit.${format}.jsonl`);
  const r = await runCli(cli, ['audit', 'export', '--format', format, '--out', file, '--store', location]);
  t.equal(r.code, 0, r.stdout);
  t.match(r.env, { data: { format, events: 6, file } });
  t.equal(statSync(file).mode & 0o777, 0o600, 'written for the operator only');
  const text = readFileSync(file, 'utf8');
  t.ok(text.endsWith('\n'), 'every line ends');
  return text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Json);
}

for (const backend of BACKENDS) {
  t.test(backend.name, { skip: backend.skip }, async (t) => {
    const { store, location } = await freshStore(t, backend);
    await fill(store);
    const stored = await backend.exec(
      location,
      'SELECT seq, hash, time_ms, data FROM audit_events ORDER BY seq',
    );

    t.test('ocsf: the required fields of HTTP Activity and API Activity', async (t) => {
      const lines = await exported(t, location, 'ocsf');
      t.equal(lines.length, stored.length);
      for (const [i, o] of lines.entries()) {
        const row = stored[i]!;
        t.same(ocsfProblems(o), [], `line ${i + 1} is valid OCSF 1.3.0 (class ${o['class_uid']})`);
        t.match(o, {
          activity_id: Number,
          category_uid: Number,
          class_uid: Number,
          severity_id: Number,
          time: Number(row['time_ms']),
          metadata: {
            version: '1.3.0',
            product: { name: 'clibroker', vendor_name: 'clibroker' },
            uid: String(row['seq']),
          },
          unmapped: { clibroker: { seq: Number(row['seq']), hash: row['hash'] } },
        });
        t.equal(
          o['type_uid'],
          o['class_uid'] * 100 + o['activity_id'],
          'type_uid is class_uid * 100 + activity_id',
        );
        if (o['class_uid'] === 4002) {
          t.equal(o['category_uid'], 4);
          t.match(o, {
            dst_endpoint: { hostname: 'api.github.com' },
            http_request: { http_method: String, url: { hostname: 'api.github.com' } },
          });
        } else {
          t.match(o, {
            class_uid: 6003,
            category_uid: 6,
            actor: { invoked_by: 'clibroker' },
            api: { operation: String },
            src_endpoint: { name: 'clibroker' },
          });
        }
      }
      t.match(lines[0], {
        class_uid: 4002,
        activity_id: 3,
        action_id: 1,
        disposition_id: 1,
        status_id: 1,
        http_response: { code: 200 },
      });
      t.match(lines[1], {
        class_uid: 4002,
        activity_id: 99,
        activity_name: 'Patch',
        action_id: 2,
        disposition_id: 2,
        status_id: 2,
        status_code: 'CLI_REQUEST_TIER_DENIED',
        http_response: { code: 422, message: 'answered by clibroker' },
      });
      t.notOk('http_status' in lines[1]!, 'no vendor status: the vendor never saw it');
      t.match(lines[2], {
        class_uid: 6003,
        activity_id: 99,
        status_id: 2,
        api: { operation: 'extension.execution.failed' },
      });
      t.match(lines[3], { class_uid: 6003, activity_id: 3, actor: { user: { name: 'ops@example.com' } } });
      t.match(lines[4], { class_uid: 6003, activity_id: 4, api: { operation: 'store.events.pruned' } });
      t.match(lines[5], { class_uid: 4002, http_response: { code: 0, message: /no answer/ } });
    });

    t.test('otlp: one ExportLogsServiceRequest per line, its log record complete', async (t) => {
      const lines = await exported(t, location, 'otlp');
      t.equal(lines.length, stored.length);
      for (const [i, o] of lines.entries()) {
        const row = stored[i]!;
        t.same(otlpLogsProblems(o), [], `line ${i + 1} is a valid ExportLogsServiceRequest`);
        const [rl] = o['resourceLogs'];
        t.same(rl.resource.attributes, [{ key: 'service.name', value: { stringValue: 'clibroker' } }]);
        t.equal(rl.scopeLogs[0].scope.name, 'clibroker.audit');
        const [rec] = rl.scopeLogs[0].logRecords;
        t.equal(
          rec.timeUnixNano,
          `${BigInt(Number(row['time_ms'])) * 1_000_000n}`,
          'nanoseconds, as a decimal string',
        );
        t.ok(Number.isInteger(rec.severityNumber) && rec.severityNumber >= 1 && rec.severityNumber <= 24);
        t.match(rec.severityText, /^(INFO|WARN)$/);
        t.equal(rec.body.stringValue, row['data'], 'the body is the stored event');
        const attrs = Object.fromEntries(rec.attributes.map((a: Json) => [a.key, a.value]));
        t.same(attrs['event.name'], { stringValue: JSON.parse(String(row['data'])).type });
        t.same(attrs['clibroker.seq'], { intValue: String(row['seq']) }, 'int64 as a decimal string');
        t.same(attrs['clibroker.hash'], { stringValue: row['hash'] });
      }
      const attrs = (i: number) =>
        Object.fromEntries(
          lines[i]!['resourceLogs'][0].scopeLogs[0].logRecords[0].attributes.map((a: Json) => [
            a.key,
            a.value,
          ]),
        );
      t.same(attrs(1)['http.request.method'], { stringValue: 'PATCH' });
      t.equal(
        lines[1]!['resourceLogs'][0].scopeLogs[0].logRecords[0].severityText,
        'WARN',
        'a refusal is a warning',
      );
    });
  });
}
