/**
 * The bundled CLI's commands. A command is listed only once its back-end exists in the
 * tree (issue 6: commands must not pretend); see docs/cli.md for what is still missing.
 */
import type { AnyTool } from '../types.js';
import { agentManifest } from './agent-manifest.js';
import { manifestValidate } from './manifest-validate.js';
import { policyClassify } from './policy-classify.js';

/** Every command of `clibroker`, in help order. */
export const BUNDLED_TOOLS: readonly AnyTool[] = [agentManifest, manifestValidate, policyClassify];
