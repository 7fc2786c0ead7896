/**
 * runConformance: the CLI runs its declared read (and write) command once each through the
 * real broker and the real sandbox, against the embedded mock vendor, and the checks read
 * what happened — the audit events, the tunnels, the vendor's log and how the child ended.
 * Nothing is re-detected here: each refusal the engine already codes (HTTP/2 only, port,
 * upgrade, signing) is read back from its audit event.
 *
 *   start the mock vendor ─▶ a broker trusting it (loopback allowed) ─▶ a runner on an
 *   in-memory store ─▶ read command at tier read ─▶ write command at tier write
 *   ─▶ the checks, in order ─▶ the first failing check is the verdict
 */
import { randomUUID } from 'node:crypto';
import { redactLogText } from '../audit/logger.js';
import { createBroker } from '../broker/broker.js';
import type { AuditEvent } from '../audit/types.js';
import type { TunnelEvent } from '../broker/types.js';
import { startMockVendor, type VendorRequest } from '../mockvendor/server.js';
import { createRunner } from '../runs/runner.js';
import type { RunInput, RunResult } from '../runs/types.js';
import { openSqliteStore } from '../store/sqlite.js';
import { evaluateChecks, type ProbeRun } from './checks.js';
import type { ConformanceOptions, ConformanceReport } from './types.js';

const DEFAULT_DEADLINE_MS = 60_000;

/**
 * Waits until `count()` has not changed for QUIET_MS (at most SETTLE_MS in all). The runner
 * closes the session before it returns, and each tunnel reports a moment later, when its
 * socket has closed.
 */
const QUIET_MS = 50;
const SETTLE_MS = 1_000;
async function quiet(count: () => number): Promise<void> {
  const until = Date.now() + SETTLE_MS;
  let last = count();
  let since = Date.now();
  while (Date.now() < until && Date.now() - since < QUIET_MS) {
    await new Promise((r) => setTimeout(r, 10));
    const n = count();
    if (n !== last) {
      last = n;
      since = Date.now();
    }
  }
}

/** Runs the CLI through the broker against the vendor and checks that it can be governed (docs/conformance.md). */
export async function runConformance(opts: ConformanceOptions): Promise<ConformanceReport> {
  const vendor = await startMockVendor(opts.vendor);
  const audits: AuditEvent[] = [];
  const tunnels: TunnelEvent[] = [];
  let broker: Awaited<ReturnType<typeof createBroker>> | undefined;
  const store = openSqliteStore(':memory:');
  try {
    broker = await createBroker({
      upstream: { ca: vendor.caPem, resolve: vendor.resolve, allowAddresses: ['127.0.0.0/8'] },
      onAudit: (e) => audits.push(e),
      onTunnel: (e) => tunnels.push(e),
    });
    const runner = createRunner({ broker, store });
    const deadlineMs = opts.deadlineMs ?? DEFAULT_DEADLINE_MS;
    const probe = async (kind: 'read' | 'write', args: readonly string[]): Promise<ProbeRun> => {
      const runId = randomUUID();
      const logFrom = vendor.log.length;
      const input: RunInput = {
        extension: opts.extension,
        cli: opts.cli,
        args,
        connection: opts.connection,
        ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
        ...(opts.image ? { image: opts.image } : {}),
        ...(opts.probe.stdin !== undefined ? { stdin: opts.probe.stdin } : {}),
        tier: {
          requested: kind,
          organizationCeiling: 'write',
          assignmentAllow: 'write',
          identity: 'assigned',
        },
        context: { kind: 'agent-step', tool: `${opts.cli}_cli`, toolArgs: { args } },
        runId,
        deadlineMs,
      };
      let result: RunResult | undefined;
      let thrown: string | undefined;
      try {
        result = await runner.run(input);
      } catch (err) {
        const e = err as { code?: string; message?: string };
        thrown = redactLogText(`${e.code ?? 'ERROR'}: ${e.message ?? String(err)}`).slice(0, 300);
      }
      const mine = (l?: Readonly<Record<string, string>>): boolean => l?.runId === runId;
      await quiet(() => tunnels.filter((e) => mine(e.labels)).length);
      return {
        kind,
        args,
        deadlineMs,
        ...(result ? { result } : {}),
        ...(thrown ? { thrown } : {}),
        audits: audits.filter((e) => mine(e.labels)),
        tunnels: tunnels.filter((e) => mine(e.labels)),
        vendorLog: vendor.log.slice(logFrom) as VendorRequest[],
      };
    };
    const runs: ProbeRun[] = [await probe('read', opts.probe.read)];
    if (opts.probe.write) runs.push(await probe('write', opts.probe.write));
    const checks = evaluateChecks(runs, { egress: opts.extension.egress });
    const failed = checks.find((c) => !c.ok);
    return {
      cli: opts.cli,
      verdict: failed ? 'refused' : 'pass',
      ...(failed ? { reason: failed.code } : {}),
      checks,
    };
  } finally {
    await broker?.close();
    await vendor.close();
    await store.close();
  }
}
