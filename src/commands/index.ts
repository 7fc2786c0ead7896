/**
 * The bundled CLI's commands. A command is listed only once its back-end exists in the
 * tree (a command must not pretend). Every back-end is a dynamic import inside a
 * command's `run`, so `--help` loads none of them.
 */
import type { AnyTool } from '../cli/types.js';
import { agentManifest } from './agent-manifest.js';
import { approvalsApprove, approvalsList, approvalsReject, approvalsShow } from './approvals.js';
import { auditExport, auditQuery, auditReceipt, auditVerify } from './audit.js';
import { configValidate } from './config.js';
import { conformance } from './conformance.js';
import { daemon } from './daemon.js';
import { demo } from './demo.js';
import { doctor } from './doctor.js';
import { helptreeCrawl } from './help-crawl.js';
import { manifestValidate } from './manifest-validate.js';
import { policyClassify } from './policy-classify.js';
import { resume, run } from './run.js';
import { serve } from './serve.js';
import { storeMigrate, storePrune } from './store.js';
import { tiersSet } from './tiers.js';
import { vendorResume, vendorRun } from './vendor.js';
import { AGENT_TOOLS } from './agent-tools.js';

export { AGENT_TOOLS, agentTools } from './agent-tools.js';

/** Every command of `clibroker`, in help order. */
export const BUNDLED_TOOLS: readonly AnyTool[] = [
  vendorRun,
  vendorResume,
  run,
  resume,
  approvalsList,
  approvalsShow,
  approvalsApprove,
  approvalsReject,
  auditQuery,
  auditVerify,
  auditReceipt,
  auditExport,
  tiersSet,
  storeMigrate,
  storePrune,
  manifestValidate,
  configValidate,
  doctor,
  policyClassify,
  agentManifest,
  helptreeCrawl,
  conformance,
  demo,
  daemon,
  serve,
];

/** Every other command: a person's decision or an operator's job, never in `agent manifest`. */
export const PERSON_ONLY_TOOLS: ReadonlySet<AnyTool> = new Set(
  BUNDLED_TOOLS.filter((t) => !AGENT_TOOLS.includes(t)),
);
