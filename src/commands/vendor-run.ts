/**
 * `clibroker vendor run` and `vendor resume`: a manifest's CLI run once through an in-process
 * engine, its store and run spec, and the same command again once a person approved it.
 *
 * Loaded only by a command's `run` (a dynamic import), like every back-end of the bundled
 * commands: `--help` never pays for the broker, the runner, the store or SQLite.
 */
import { randomUUID } from 'node:crypto';
import type { Connection } from '../credentials/types.js';
import { brokerError, errorMessage } from '../errors.js';
import type { ApprovalContext, Tier } from '../policy/index.js';
import type { RunInput } from '../runs/index.js';
import type { Store } from '../store/types.js';
import { approvalNotFound } from './approval-decide.js';
import { loadConnection } from './connection.js';
import { type Engine, startEngine } from './engine.js';
import { fail } from '../cli/envelope.js';
import { type RunData, runData } from '../cli/run-result.js';
import { loadRunSpec, type RunSpec, removeRunSpec, saveRunSpec, specDir } from './run-spec.js';
import { withStore } from './store-flag.js';

/** The flags of `vendor run`, as validated. */
export interface VendorRunParams {
  manifest: Record<string, unknown>;
  cli: string;
  args: string[];
  stdin?: string;
  tier?: Tier;
  context: ApprovalContext;
  organizationCeiling: Tier;
  assignmentAllow?: Tier;
  assignment: string;
  identity: 'assigned' | 'linked';
  endpoint?: string;
  deadline: number;
  store?: string;
  connectionFile?: string;
}

/** What `vendor run|resume` answers: the run's data, plus whether a mock vendor served it. */
export type VendorRunData = RunData & { mockVendor?: string };

async function inputFromSpec(store: Store, spec: RunSpec, connection: Connection): Promise<RunInput> {
  // The store's switch is the audited gate (raised only by a person, `tiers set`); the flag can lower it, never raise it.
  const switched = await store.getAssignmentTier({
    extensionId: spec.extension.id,
    assignmentId: spec.tier.assignment,
    cliId: spec.cli,
  });
  const assignmentAllow: Tier =
    spec.tier.assignmentAllow === 'read' || switched === 'read' ? 'read' : 'write';
  return {
    extension: spec.extension,
    cli: spec.cli,
    args: spec.args,
    ...(spec.stdin !== undefined ? { stdin: spec.stdin } : {}),
    connection,
    ...(spec.endpoint !== undefined ? { endpoint: spec.endpoint } : {}),
    tier: {
      ...(spec.tier.requested ? { requested: spec.tier.requested } : {}),
      organizationCeiling: spec.tier.organizationCeiling,
      assignmentAllow,
      identity: spec.tier.identity,
    },
    // the approver sees the same tool and arguments as for the `<id>_cli` gadget
    context: { kind: spec.context, tool: `${spec.cli}_cli`, toolArgs: { args: spec.args } },
    runId: spec.runId,
    deadlineMs: spec.deadlineMs,
  };
}

function withMock(data: RunData, engine: Engine): VendorRunData {
  return engine.mockVendor ? { ...data, mockVendor: engine.mockVendor } : data;
}

/** `clibroker vendor run`. */
export async function vendorRun(p: VendorRunParams, program = 'clibroker'): Promise<VendorRunData> {
  const { parseExtensionManifest } = await import('../manifest/define.js');
  const extension = parseExtensionManifest(p.manifest);
  const connection = loadConnection(p.connectionFile);
  return withStore(p.store, true, async (store, path) => {
    const spec: RunSpec = {
      v: 1,
      runId: randomUUID(),
      createdAt: new Date().toISOString(),
      extension,
      cli: p.cli,
      args: p.args,
      ...(p.stdin !== undefined ? { stdin: p.stdin } : {}),
      ...(p.endpoint !== undefined ? { endpoint: p.endpoint } : {}),
      tier: {
        ...(p.tier ? { requested: p.tier } : {}),
        organizationCeiling: p.organizationCeiling,
        identity: p.identity,
        assignment: p.assignment,
        ...(p.assignmentAllow ? { assignmentAllow: p.assignmentAllow } : {}),
      },
      context: p.context,
      deadlineMs: p.deadline * 1000,
    };
    const engine = await startEngine(store, connection);
    try {
      const result = await engine.runner.run(await inputFromSpec(store, spec, connection));
      if (result.status === 'paused' && path !== ':memory:') {
        try {
          saveRunSpec(path, spec);
        } catch (e) {
          throw new Error(
            `run ${spec.runId} paused on approval ${result.approval.id}, but its run spec could not be saved under ${specDir(path)} (${(e as Error).message}); it cannot be resumed`,
          );
        }
      }
      return withMock(runData(result, program), engine);
    } finally {
      await engine.close();
    }
  });
}

/** `clibroker vendor resume`: the same command again, once, with the approved request allowed. */
export async function vendorResume(
  p: { approval: string; store?: string; connectionFile?: string },
  program = 'clibroker',
): Promise<VendorRunData> {
  return withStore(p.store, false, async (store, path) => {
    const approval = await store.getApproval(p.approval);
    if (!approval) return approvalNotFound(p.approval, 'approval');
    // the runner checks these again; checked first here so the answer names the approval's state, not a missing spec
    if (approval.status === 'rejected') {
      removeRunSpec(path, approval.runId);
      throw brokerError('EXEC_ACTION_CONFIRMATION_DECLINED', { approval });
    }
    if (approval.status !== 'approved') {
      fail('runtime', errorMessage('APPROVAL_NOT_PENDING', { id: approval.id, status: approval.status }), {
        code: 'APPROVAL_NOT_PENDING',
        flag: 'approval',
        got: approval.id,
        hint:
          approval.status === 'pending'
            ? `a person approves it first: clibroker approvals approve --id ${approval.id} --by <who>`
            : 'an approval runs once; run the command again with vendor run',
      });
    }
    const spec = loadRunSpec(path, approval.runId);
    if (!spec) {
      fail(
        'runtime',
        `run ${approval.runId} of approval ${approval.id} has no run spec under ${specDir(path)}`,
        {
          code: 'APPROVAL_NOT_FOUND',
          hint: "only a run paused by 'clibroker vendor run' with this --store can be resumed here; a host that called the runner itself resumes it with runner.resume",
        },
      );
    }
    const shown = (approval.toolArgs as { args?: unknown } | null)?.args;
    if (JSON.stringify(shown) !== JSON.stringify(spec.args) || approval.tool !== `${spec.cli}_cli`) {
      fail(
        'runtime',
        `the run spec of run ${approval.runId} does not match what approval ${approval.id} showed the reviewer; refusing to resume`,
        {
          hint: `the spec under ${specDir(path)} was changed; run the command again with 'clibroker vendor run'`,
        },
      );
    }
    const connection = loadConnection(p.connectionFile);
    const engine = await startEngine(store, connection);
    try {
      const result = await engine.runner.resume(approval.id, await inputFromSpec(store, spec, connection));
      // a resumed run that paused again (another destructive request) keeps the same run id and spec
      if (result.status !== 'paused') removeRunSpec(path, spec.runId);
      return withMock(runData(result, program), engine);
    } finally {
      await engine.close();
    }
  });
}
