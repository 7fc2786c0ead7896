/**
 * The main job (`npm run demo` and `clibroker demo`): real curl, run by the runner
 * through a real broker, against the embedded GitHub-like mock vendor — no network needed.
 *
 *   read tier:  GET /user passes; a GraphQL query passes; a GraphQL mutation is refused (422)
 *   an admin raises curl's Allow-writes switch (audited in the same transaction)
 *   write tier: the mutation passes; DELETE /repos/acme/app pauses for approval; a person
 *               approves; the run resumes and the DELETE is sent exactly once; resuming
 *               again is refused (single use); a host outside egress is refused
 *   then the audit trail from the store, as a table.
 *
 * The vendor answers 401 to anything but the real token, so every passing call proves the
 * stamping; curl itself only ever holds a placeholder.
 */
import type { Tier } from '../policy/types.js';
import { createBroker } from '../broker/broker.js';
import { auditTable } from '../store/audit-table.js';
import { PLACEHOLDER_TOKEN } from '../credentials/child-env.js';
import type { Connection } from '../credentials/types.js';
import { isBrokerError } from '../errors.js';
import { defineExtension } from '../manifest/define.js';
import { curlCli, githubExtension } from '../manifest/examples.js';
import { githubVendor } from '../mockvendor/github.js';
import { startMockVendor } from '../mockvendor/server.js';
import { createRunner, type RunInput, type RunResult } from '../runs/index.js';
import { openSqliteStore } from '../store/sqlite.js';

const REAL_TOKEN = 'gho_DemoRealTokenKeptByClibroker0001';
const REVIEWER = 'reviewer@example.com';
const ADMIN = 'admin@example.com';

/** The demo's extension: api.github.com and one CLI, curl. */
export const demoExtension = defineExtension(githubExtension([curlCli()]));

export interface DemoStep {
  title: string;
  tier: Tier;
  /** the run's status, or the error code when the step is expected to fail */
  status: string;
  runId?: string;
  exitCode?: number | null;
  /** the HTTP status curl saw */
  http?: string;
  /** the start of the response body, or the refusal / error message */
  output: string;
  approvalId?: string;
}

export interface DemoReport {
  /** every check held */
  ok: boolean;
  steps: DemoStep[];
  checks: {
    mutationRefusedAtRead: boolean;
    destructivePaused: boolean;
    deleteSentExactlyOnce: boolean;
    secondResumeRefused: boolean;
    realCredentialOnEveryRequest: boolean;
    placeholderNeverForwarded: boolean;
  };
  vendorRequests: number;
  /** the audit trail from the store, as a text table */
  auditTable: string;
}

export interface DemoOptions {
  /** each line of the readable narration (npm run demo prints them); none by default */
  log?: (line: string) => void;
}

const gql = (q: string): string[] => [
  '-X',
  'POST',
  '-H',
  'content-type: application/json',
  '--data',
  JSON.stringify({ query: q }),
  'https://api.github.com/graphql',
];
const ADD_STAR = gql('mutation { addStar(input: {starrableId: "R_kgDOAcmeApp"}) { clientMutationId } }');

/** Run the demo; resolves to what happened. Needs curl on PATH. */
export async function runDemo(opts: DemoOptions = {}): Promise<DemoReport> {
  const log = opts.log ?? (() => {});
  const vendor = await startMockVendor(githubVendor({ token: REAL_TOKEN }));
  const broker = await createBroker({
    upstream: { ca: vendor.caPem, resolve: vendor.resolve, allowAddresses: ['127.0.0.0/8'] },
  });
  const store = openSqliteStore(':memory:');
  const runner = createRunner({ broker, store });
  const connection: Connection = { kind: 'oauth_access_token', accessToken: REAL_TOKEN };
  const steps: DemoStep[] = [];
  try {
    const input = (tier: Tier, args: string[]): RunInput => {
      // curl holds only a placeholder; the broker replaces it with the real token on api.github.com.
      // --fail-with-body: a refusal (4xx) makes curl fail, so the run reports it as refused.
      const argv = [
        '-sS',
        '--fail-with-body',
        '--max-time',
        '20',
        '-w',
        '\\n%{http_code}',
        '-H',
        `Authorization: token ${PLACEHOLDER_TOKEN}`,
        ...args,
      ];
      return {
        extension: demoExtension,
        cli: 'curl',
        args: argv,
        connection,
        tier: {
          requested: tier,
          organizationCeiling: 'write',
          assignmentAllow: 'read',
          identity: 'assigned',
        },
        context: { kind: 'agent-step', tool: 'curl_cli', toolArgs: { args: argv } },
        deadlineMs: 60_000,
      };
    };
    const withAllow = async (i: RunInput): Promise<RunInput> => ({
      ...i,
      tier: {
        ...i.tier,
        assignmentAllow: await store.getAssignmentTier({
          extensionId: demoExtension.id,
          assignmentId: 'demo',
          cliId: i.cli,
        }),
      },
    });
    const record = (title: string, tier: Tier, r: RunResult): DemoStep => {
      const lines = r.stdout.split('\n');
      const http = lines.length > 1 ? lines.pop() : undefined;
      const output = lines.join(' ').trim() || r.stderr.trim();
      const step: DemoStep = {
        title,
        tier,
        status: r.status,
        runId: r.runId,
        exitCode: r.exitCode,
        ...(http ? { http } : {}),
        output: output.slice(0, 240),
        ...(r.status === 'paused' ? { approvalId: r.approval.id } : {}),
      };
      steps.push(step);
      log(`▶ ${title}`);
      log(
        `  ${r.status}: curl exit ${r.exitCode}${http ? `, HTTP ${http}` : ''}, tier ${r.cliTier} (${r.cliTierReason}): ${step.output.slice(0, 160)}`,
      );
      if (r.status === 'paused')
        log(`  pending approval ${r.approval.id}: ${r.approval.method} ${r.approval.host}${r.approval.path}`);
      log('');
      return step;
    };
    const run = async (title: string, tier: Tier, args: string[]) => {
      const r = await runner.run(await withAllow(input(tier, args)));
      return { r, step: record(title, tier, r) };
    };

    log(
      'clibroker demo — real curl, governed by the runner and broker, against an embedded GitHub-like vendor\n',
    );
    await run('GET /user at tier read', 'read', ['https://api.github.com/user']);
    await run(
      'GraphQL query IssueList at tier read',
      'read',
      gql(
        'query IssueList($owner: String = "acme") { repository(owner: $owner, name: "app") { issues(first: 30) { nodes { number title } } } }',
      ),
    );
    const refused = await run('GraphQL mutation addStar at tier read', 'read', ADD_STAR);

    const raised = await store.setAssignmentTier({
      extensionId: demoExtension.id,
      assignmentId: 'demo',
      cliId: 'curl',
      tier: 'write',
      who: ADMIN,
    });
    log(
      `▶ ${ADMIN} turns on "Allow writes" for curl in the assignment: ${raised.previous} → ${raised.tier} (audited as ${raised.event?.type})\n`,
    );

    await run('GraphQL mutation addStar at tier write', 'write', ADD_STAR);
    const deleteArgs = ['-X', 'DELETE', 'https://api.github.com/repos/acme/app'];
    const paused = await run('DELETE /repos/acme/app at tier write', 'write', deleteArgs);
    let deleteSentExactlyOnce = false;
    let secondResumeRefused = false;
    if (paused.r.status === 'paused') {
      const id = paused.r.approval.id;
      await runner.approve(id, REVIEWER);
      log(`▶ ${REVIEWER} approves ${id}\n`);
      const again = await withAllow(input('write', deleteArgs));
      const resumed = await runner.resume(id, again);
      record('the run resumes: the same command again, once, with that DELETE approved', 'write', resumed);
      deleteSentExactlyOnce =
        resumed.status === 'completed' && vendor.log.filter((q) => q.method === 'DELETE').length === 1;
      try {
        await runner.resume(id, again);
      } catch (e) {
        secondResumeRefused = isBrokerError(e) && e.code === 'APPROVAL_NOT_PENDING';
        const message = e instanceof Error ? e.message : String(e);
        steps.push({
          title: 'resume the same approval a second time',
          tier: 'write',
          status: isBrokerError(e) ? e.code : 'error',
          output: message,
        });
        log(`▶ resume the same approval a second time\n  refused: ${message}\n`);
      }
    }
    await run('GET https://evil.example.com/ (not in egress)', 'write', ['https://evil.example.com/']);

    const events = await store.listEvents({ limit: 10_000 });
    const table = auditTable(events);
    log('Audit trail (from the store: one event per request, one per run, the tier change):\n');
    log(table);

    const checks: DemoReport['checks'] = {
      mutationRefusedAtRead:
        refused.r.status === 'refused' &&
        refused.r.refusal.policyCode === 'CLI_REQUEST_TIER_DENIED' &&
        refused.step.http === '422',
      destructivePaused: paused.r.status === 'paused',
      deleteSentExactlyOnce,
      secondResumeRefused,
      realCredentialOnEveryRequest:
        vendor.log.length > 0 && vendor.log.every((q) => q.headers.authorization === `token ${REAL_TOKEN}`),
      placeholderNeverForwarded: !vendor.log.some((q) =>
        JSON.stringify(q.headers).includes(PLACEHOLDER_TOKEN),
      ),
    };
    const ok = Object.values(checks).every(Boolean);
    log(
      `vendor received ${vendor.log.length} requests; ${Object.entries(checks)
        .map(([k, v]) => `${k}: ${v}`)
        .join('; ')}`,
    );
    log(ok ? 'demo: every check held' : 'demo: a check FAILED');
    return { ok, steps, checks, vendorRequests: vendor.log.length, auditTable: table };
  } finally {
    await broker.close();
    await vendor.close();
    await store.close();
  }
}
