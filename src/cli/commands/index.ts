/**
 * The bundled CLI's commands. A command is listed only once its back-end exists in the
 * tree (a command must not pretend). Every back-end is a dynamic import inside a
 * command's `run`, so `--help` loads none of them.
 */
import type { AnyTool } from '../types.js';
import { agentManifest } from './agent-manifest.js';
import { approvalsApprove, approvalsList, approvalsReject, approvalsShow } from './approvals.js';
import { auditQuery } from './audit.js';
import { configValidate } from './config.js';
import { conformance } from './conformance.js';
import { demo } from './demo.js';
import { helptreeCrawl } from './help-crawl.js';
import { manifestValidate } from './manifest-validate.js';
import { policyClassify } from './policy-classify.js';
import { storeMigrate } from './store.js';
import { tiersSet } from './tiers.js';
import { vendorResume, vendorRun } from './vendor.js';

/** Every command of `clibroker`, in help order. */
export const BUNDLED_TOOLS: readonly AnyTool[] = [
  vendorRun,
  vendorResume,
  approvalsList,
  approvalsShow,
  approvalsApprove,
  approvalsReject,
  auditQuery,
  tiersSet,
  storeMigrate,
  manifestValidate,
  configValidate,
  policyClassify,
  agentManifest,
  helptreeCrawl,
  conformance,
  demo,
];

/**
 * A person's decisions and the operator's commands, not an agent's: `agent manifest` leaves
 * these out of the tools it describes to agents, so an agent is never invited to approve its
 * own paused request, to raise its own assignment's tier, to change the store's schema, to run
 * programs on the host (`helptree crawl`, `conformance`) or to read the operator's configuration.
 */
export const PERSON_ONLY_TOOLS: ReadonlySet<AnyTool> = new Set([approvalsApprove, approvalsReject, tiersSet, storeMigrate, helptreeCrawl, conformance, configValidate]);

/** The commands `agent manifest` describes to agents. */
export function agentTools(): AnyTool[] {
  return BUNDLED_TOOLS.filter((t) => !PERSON_ONLY_TOOLS.has(t));
}
