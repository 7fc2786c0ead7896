/**
 * The `data` of a vendor run, shared by `clibroker vendor run|resume` and the `<id>_cli`
 * gadgets: the runner's result as is (status, exitCode, stdout, stderr, the refusal, tier
 * and why), plus `approvalId` and the next step when the run paused. Pure: no back-end import.
 */
import type { RunResult } from '../runs/types.js';

/** What an agent reads back from a run. */
export type RunData = RunResult & {
  /** the pending approval's id when `status` is `paused` */
  approvalId?: string;
  /** what happens next, when the agent cannot finish the job itself (a person must approve) */
  next?: string;
};

/**
 * Shape a RunResult into envelope data. With `program` (the bundled CLI) a paused run says
 * which commands approve and resume it; a gadget host runs its own approval flow.
 */
export function runData(result: RunResult, program?: string): RunData {
  if (result.status !== 'paused') return result;
  const id = result.approval.id;
  if (program === undefined) return { ...result, approvalId: id };
  return {
    ...result,
    approvalId: id,
    next: `a person approves with '${program} approvals approve --id ${id} --by <who>' (or rejects it); then '${program} vendor resume --approval ${id}' runs the command again once`,
  };
}
