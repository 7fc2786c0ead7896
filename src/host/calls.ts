/**
 * One call of a host, as a sequence of steps:
 *
 *   runTool: the tool, the options and the input checked (a refusal leaves the host's
 *     execution event) ─▶ `--help` answered from the help tree, or ─▶ the call
 *   resume: the approval read ─▶ the call it holds checked again ─▶ the call
 *   the call: the store's assignment switch ─▶ the run's input (the connection read by the
 *     runner when the call starts) ─▶ runner.run or runner.resume ─▶ its outcome
 *
 * The host writes an execution event only for a call no runner saw: help from the tree, or a
 * refusal before any runner. Every other call's event is the runner's.
 */
import type { Logger } from 'pino';
import { redactSecrets } from '../audit/secret-shape.js';
import type { ConfiguredTool, InstalledExtension, LoadedConfig } from '../config/types.js';
import { credentialKind } from '../credentials/types.js';
import { BrokerError, brokerError, type ErrorCode, isBrokerError, isErrorCode } from '../errors.js';
import { answerHelpFromTree } from '../help/index.js';
import { resolveTier, type Tier } from '../policy/index.js';
import type { Runner, RunInput, RunResult } from '../runs/index.js';
import { outlived } from '../runs/outcome.js';
import type { Approval, ExecutionEvent, Store } from '../store/types.js';
import { checkCallOptions, checkToolInput } from './input.js';
import { findTool, type HelpTrees, type HostTools } from './tools.js';
import type { CallControl, CallOptions, ToolInput, ToolOutput } from './types.js';

/** What a host's calls share: its configuration, store, runner, tools and help trees. */
export interface HostParts {
  config: LoadedConfig;
  store: Store;
  runner: Runner;
  tools: HostTools;
  trees: HelpTrees;
  logger?: Logger;
}

/** The tier of a call refused before its tool or options were known. */
const NOT_RESOLVED = { tier: 'read', reason: 'not-resolved' } as const;

/** The options a resumed call runs with: a run could only pause at tier write in an agent step with a person. */
const RESUMED: Required<CallOptions> = { cliTier: 'write', context: 'agent-step', tierSource: 'caller' };

/** `host.runTool`: a tool call checked, answered from the help tree, or run. */
export async function runTool(
  parts: HostParts,
  ref: unknown,
  input: unknown,
  options: unknown,
  control?: CallControl,
): Promise<ToolOutput> {
  const started = performance.now();
  const checked = await checkCall(parts, ref, input, options, started);
  const help = await helpFromTree(parts, ref, checked.tool, checked.input, started);
  if (help) return help;
  return callTool(parts, checked.tool, checked.input, checked.options, undefined, control);
}

/**
 * The call's tool, options and input, checked before any runner; a refusal leaves its
 * execution event (the tier it would have run at, as far as the host knows) and is rethrown.
 */
async function checkCall(
  parts: HostParts,
  ref: unknown,
  input: unknown,
  options: unknown,
  started: number,
): Promise<{ tool: ConfiguredTool; options: Required<CallOptions>; input: ToolInput }> {
  let tool: ConfiguredTool | undefined;
  let opts: Required<CallOptions> | undefined;
  try {
    tool = findTool(parts.tools, ref);
    opts = checkCallOptions(options);
    return { tool, options: opts, input: checkToolInput(input) };
  } catch (err) {
    await record(parts, hostEvent(ref, tool, await tierOf(parts, tool, opts), started, err));
    throw err;
  }
}

/** `--help` on a command with subcommands, answered from the help tree: no sandbox, no session. */
async function helpFromTree(
  parts: HostParts,
  ref: unknown,
  tool: ConfiguredTool,
  input: ToolInput,
  started: number,
): Promise<ToolOutput | undefined> {
  const tree = parts.trees.of(tool);
  const page = tree ? answerHelpFromTree(tree, input.args, tool.cliId) : undefined;
  if (page === undefined) return undefined;
  const answered: ToolOutput = {
    exitCode: 0,
    stdout: page,
    stderr: '',
    truncated: false,
    runId: crypto.randomUUID(),
    cliTier: 'read',
    cliTierReason: 'help-from-tree',
  };
  await record(parts, {
    ...hostEvent(ref, tool, { tier: 'read', reason: 'help-from-tree' }, started),
    runId: answered.runId,
  });
  return answered;
}

/**
 * `host.resume`: the approval holds the call as the reviewer saw it (tool, args, stdin).
 * Nothing is kept beside the store: any host over the same store can resume it.
 */
export async function resumeApproval(
  parts: HostParts,
  approvalId: unknown,
  control?: CallControl,
): Promise<ToolOutput> {
  const approval = await parts.store.getApproval(String(approvalId));
  if (!approval) throw brokerError('APPROVAL_NOT_FOUND', { id: String(approvalId).slice(0, 64) });
  const input = resumedInput(approval);
  let tool: ConfiguredTool;
  try {
    tool = findTool(parts.tools, approval.tool);
  } catch (err) {
    // the approval's tool is no longer offered: a refused call, under the approval's run
    await record(parts, {
      ...hostEvent(approval.tool, undefined, NOT_RESOLVED, performance.now(), err),
      runId: approval.runId,
    });
    throw err;
  }
  return callTool(parts, tool, input, RESUMED, approval, control);
}

/** The agent's input an approval holds, checked again; one that no longer passes cannot be resumed. */
export function resumedInput(approval: Pick<Approval, 'id' | 'toolArgs'>): ToolInput {
  try {
    return checkToolInput(approval.toolArgs);
  } catch {
    throw brokerError(
      'APPROVAL_NOT_FOUND',
      { notResumable: approval.id },
      { details: { approvalId: approval.id } },
    );
  }
}

/** The call itself: the store's assignment switch, the run's input, the runner, its outcome. */
async function callTool(
  parts: HostParts,
  tool: ConfiguredTool,
  input: ToolInput,
  options: Required<CallOptions>,
  resumeOf?: Approval,
  control: CallControl = {},
): Promise<ToolOutput> {
  const { config, store, runner } = parts;
  const ext = config.extensions.get(tool.extensionId);
  if (!ext) throw brokerError('INTERNAL_ERROR', { reason: `tool ${tool.id} has no installed extension` });
  // The store's switch for this tool is the audited gate, raised only by a person (`tiers set`).
  const assignmentAllow = await store.getAssignmentTier({
    extensionId: ext.id,
    assignmentId: ext.assignment,
    cliId: tool.cliId,
  });
  const runInput = runInputFor(config, ext, tool, input, options, assignmentAllow);
  const runId = resumeOf?.runId ?? crypto.randomUUID();
  const signal = control.signal ? { signal: control.signal } : {};
  const result = resumeOf
    ? await runner.resume(resumeOf.id, { ...runInput, runId, ...signal })
    : await runner.run({ ...runInput, runId, ...signal });
  return outcome(result);
}

/**
 * The run's input: everything but the agent's `{args, stdin?}` and the host's tier and context
 * comes from the configuration. The connection goes as its kind and a read of it: the runner
 * reads the secrets when the call starts (a rotated file takes effect on the next call), and a
 * secret that cannot be read is a call it refuses before anything runs, with its one event.
 */
export function runInputFor(
  config: Pick<LoadedConfig, 'connection' | 'ceiling' | 'deadlineMs' | 'hiddenPaths'>,
  ext: InstalledExtension,
  tool: ConfiguredTool,
  input: ToolInput,
  options: Required<CallOptions>,
  assignmentAllow: Tier,
): RunInput {
  return {
    extension: ext.manifest,
    cli: tool.cliId,
    args: input.args,
    ...(input.stdin !== undefined ? { stdin: input.stdin } : {}),
    connection: { kind: ext.connection.kind, read: () => config.connection(ext.id) },
    ...(ext.endpoint !== undefined ? { endpoint: ext.endpoint } : {}),
    tier: {
      requested: options.cliTier,
      requestedBy: options.tierSource,
      organizationCeiling: config.ceiling,
      assignmentAllow,
      identity: ext.identity,
    },
    // what the reviewer sees, and all a resume needs: it re-runs exactly what was approved
    context: { kind: options.context, tool: tool.name, toolArgs: { ...input } },
    deadlineMs: config.deadlineMs,
    image: {
      name: tool.image.name,
      executable: tool.image.executable,
      profile: tool.image.profile,
      readOnlyPaths: tool.image.readOnlyPaths,
      hiddenPaths: config.hiddenPaths,
      verify: () => tool.image.verify(),
    },
  };
}

/** Appends an execution event; a store that fails is logged, the call's own answer stands. */
async function record(parts: Pick<HostParts, 'store' | 'logger'>, event: ExecutionEvent): Promise<void> {
  await parts.store
    .appendEvent(event)
    .catch((e: unknown) => parts.logger?.error({ err: e }, 'clibroker: execution event not stored'));
}

/** The tier the call would have run at, as far as the host knows it before any runner. */
async function tierOf(
  parts: Pick<HostParts, 'config' | 'store'>,
  tool: ConfiguredTool | undefined,
  options: Required<CallOptions> | undefined,
): Promise<{ tier: Tier; reason: string }> {
  const { config, store } = parts;
  const ext = tool ? config.extensions.get(tool.extensionId) : undefined;
  if (!tool || !ext || !options) return NOT_RESOLVED;
  const assignmentAllow = await store
    .getAssignmentTier({ extensionId: ext.id, assignmentId: ext.assignment, cliId: tool.cliId })
    .catch(() => 'read' as const);
  return resolveTier({
    requested: options.cliTier,
    requestedBy: options.tierSource,
    organizationCeiling: config.ceiling,
    assignmentAllow,
    identity: ext.identity,
    credentialKind: credentialKind(ext.connection.kind),
  });
}

/**
 * The execution event of a call the host answered or refused itself: help from the tree, or a
 * refusal before any runner (a tool not offered, input or options refused). The name the
 * caller asked for is recorded as the CLI, capped and with secret-shaped parts redacted; the
 * extension is only ever one the configuration installs (a name the caller made up never
 * files an event under an extension of its choosing).
 */
export function hostEvent(
  ref: unknown,
  tool: ConfiguredTool | undefined,
  tier: { tier: Tier; reason: string },
  started: number,
  err?: unknown,
): ExecutionEvent {
  const asked = redactSecrets(typeof ref === 'string' ? ref : '').slice(0, 64) || '-';
  const extensionId = tool?.extensionId ?? '-';
  const failed = err !== undefined;
  return {
    type: failed ? 'extension.execution.failed' : 'extension.execution.succeeded',
    time: new Date().toISOString(),
    runId: crypto.randomUUID(),
    extensionId,
    cliId: tool?.cliId ?? asked,
    cliTier: tier.tier,
    cliTierReason: tier.reason,
    ...(failed ? { code: isBrokerError(err) ? err.code : 'INTERNAL_ERROR', refusedBy: 'host' as const } : {}),
    durationMs: Math.round(performance.now() - started),
  };
}
/** The call's answer: a completed run's output, or the failure its result stands for. */
export function outcome(r: RunResult): ToolOutput {
  const meta = { runId: r.runId, cliTier: r.cliTier, cliTierReason: r.cliTierReason };
  // what a failed call may have left behind at the vendor: the agent checks it with a read
  const unknown = {
    ...(r.outcomeUnknown ? { outcomeUnknown: true } : {}),
    ...(r.unknownOutcomes.length > 0 ? { unknownOutcomes: r.unknownOutcomes.map((w) => ({ ...w })) } : {}),
  };
  const output = {
    exitCode: r.exitCode,
    stdout: r.stdout,
    stderr: r.stderr,
    truncated: r.truncated,
    ...unknown,
  };
  switch (r.status) {
    case 'completed':
      return {
        exitCode: r.exitCode ?? 1,
        stdout: r.stdout,
        stderr: r.stderr,
        truncated: r.truncated,
        ...meta,
        ...(r.refusals.length > 0 ? { outlivedRefusals: r.refusals.map(outlived) } : {}),
      };
    case 'refused': {
      const f = r.refusal;
      const code: ErrorCode = isErrorCode(f.code) ? f.code : 'POLICY_BLOCKED';
      const policyCode = f.policyCode !== undefined && isErrorCode(f.policyCode) ? f.policyCode : undefined;
      throw new BrokerError(code, {
        message: f.message,
        ...(policyCode ? { policyCode } : {}),
        details: { request: { method: f.method, host: f.host, path: f.path }, ...meta, ...output },
      });
    }
    case 'paused': {
      const a = r.approval;
      throw brokerError(
        'CLI_APPROVAL_PENDING',
        { approval: a },
        {
          details: {
            approvalId: a.id,
            request: {
              method: a.method,
              host: a.host,
              path: a.path,
              ...(a.graphqlOperation ? { graphqlOperation: a.graphqlOperation } : {}),
            },
            ...meta,
            ...output,
          },
        },
      );
    }
    case 'timed_out':
      throw new BrokerError('CLI_TIMEOUT', { details: { ...meta, ...output } });
    case 'failed':
      throw brokerError(
        'CLI_EXITED_BY_SIGNAL',
        { signal: r.signal },
        { details: { signal: r.signal, ...meta, ...output } },
      );
  }
}
