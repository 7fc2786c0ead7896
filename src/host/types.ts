/**
 * The host: a loaded operator configuration running its `<id>_cli` tools. Used in-process
 * by a platform that calls tools on an agent's behalf, and by the broker daemon that serves
 * `clibroker run`. The agent's input is exactly `{args, stdin?}`; the tier and the context
 * are the host's, passed beside it.
 */
import type { ApprovalContext, Tier, TierSource } from '../policy/index.js';
import type { Approval } from '../store/types.js';

/** What an agent passes: nothing else is accepted (INVALID_TOOL_INPUT). */
export interface ToolInput {
  /** at most 256 arguments of at most 32 KiB each; passed as is, never through a shell */
  args: string[];
  /** at most 1 MiB */
  stdin?: string;
}

/** What the host decides for a call; never part of the agent's input. */
export interface CallOptions {
  /** requested tier, default read; the organization ceiling and the assignment's switch cap it */
  cliTier?: Tier;
  /** default agent-step (an agent step with a person: the only context that can pause for approval) */
  context?: ApprovalContext;
  /**
   * who chose `cliTier`, default `caller` (the platform calling the host). A daemon or server
   * names its configuration key, so a tier denial tells the agent who could change the tier.
   */
  tierSource?: TierSource;
}

/** The host platform's handle on a call in flight; never part of the agent's input. */
export interface CallControl {
  /** aborted: the CLI's process group is killed at once (the client cancelled the call) */
  signal?: AbortSignal;
}

/** A tool as listed to agents. */
export interface ToolListing {
  /** `<extension>:cli:<id>` */
  id: string;
  /** `<id>_cli` */
  name: string;
  description: string;
  /** JSON Schema of `{args, stdin?}` with its limits */
  inputSchema: Record<string, unknown>;
}

/** A completed run: a non-zero exit is data, not a failure. */
export interface ToolOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** stdout + stderr were cut at 2 MiB */
  truncated: boolean;
  runId: string;
  cliTier: Tier;
  cliTierReason: string;
  /**
   * requests clibroker refused that the CLI outlived (a host outside egress it did not need,
   * such as an update check): the call still completed. Absent when there were none.
   */
  outlivedRefusals?: { code: string; method: string; host: string; path: string }[];
}

/**
 * Every failure is a BrokerError whose `code` is the call's failure code:
 * POLICY_BLOCKED (details.policyCode, the message starting with it), CLI_APPROVAL_PENDING
 * (details.approvalId), CLI_CONFIRMATION_*, EXEC_ACTION_CONFIRMATION_DECLINED, CLI_TIMEOUT,
 * CLI_EXITED_BY_SIGNAL, INVALID_TOOL_INPUT, TOOL_VENDOR_CLI_* before the CLI runs.
 */
export interface ToolHost {
  /** the offered tools, in configuration order */
  tools(): ToolListing[];
  /** `tool`: a tool id (`github:cli:gh`) or name (`gh_cli`) */
  runTool(tool: string, input: unknown, opts?: CallOptions, control?: CallControl): Promise<ToolOutput>;
  /** Run the command of an approved approval again, once, with that one request allowed. */
  resume(approvalId: string, control?: CallControl): Promise<ToolOutput>;
  /** Approves a paused call; `resume` then runs it. */
  approve(approvalId: string, who: string): Promise<Approval>;
  /** Rejects a paused call; it can no longer be resumed. */
  reject(approvalId: string, who: string): Promise<Approval>;
  /**
   * Whether calls can start: rejects with the store's code while its audit writes fail (a
   * server's /healthz asks). A host without one is taken as ready.
   */
  checkStore?(): Promise<void>;
  /** Closes the host's broker, and its store when the host opened it. */
  close(): Promise<void>;
}
