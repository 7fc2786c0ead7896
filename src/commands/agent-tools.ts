/**
 * The bundled commands an agent is offered, apart from the full command list (index.ts) so
 * that `agent manifest`, itself a command of that list, reads them without importing it.
 */
import type { AnyTool } from '../cli/types.js';
import { policyClassify } from './policy-classify.js';
import { resume, run } from './run.js';

/**
 * What an agent is offered (`agent manifest`): an allowlist, so a new command is an
 * operator's until it is added here. An agent runs the configured tools through the daemon
 * (`run`, `resume`) and may dry-run the wire policy (`policy classify`, which reads nothing);
 * it is never invited to run a CLI with a manifest of its own (`vendor run`), to read the
 * store, to approve its own paused request, to raise its own tier, to read the operator's
 * configuration or check its deployment (`config validate`, `doctor`), to run programs on the host or to start the daemon or the MCP server that hold its secrets.
 */
export const AGENT_TOOLS: readonly AnyTool[] = [run, resume, policyClassify];

/** The commands `agent manifest` describes to agents. */
export function agentTools(): AnyTool[] {
  return [...AGENT_TOOLS];
}
