/**
 * clibroker/cli: one declarative ToolDefinition, three surfaces —
 * the zod-validated gadget, the `clibroker <namespace> <command>` CLI, and the agent's
 * tool manifest (text and JSON). docs/cli.md describes the format and the envelope.
 *
 * @module clibroker/cli
 */

// ── Defining tools ───────────────────────────────────────────────────────────────
export { defineTool, flagName, gadgetName, toolName } from './define.js';
export type {
  AnyTool,
  Envelope,
  EnvelopeError,
  ErrorType,
  FieldSpec,
  FileInputAlternative,
  InferObject,
  InferValue,
  ParamDef,
  ParamMeta,
  Params,
  RunContext,
  ToolDefinition,
  ToolExample,
  ValueSpec,
} from './types.js';

// ── Surface 1: gadgets ───────────────────────────────────────────────────────────
export { createGadget } from './gadget.js';
export type { Gadget } from './gadget.js';
export {
  createVendorCliGadget,
  describeFromHelpTree,
  extensionGadgets,
  type GadgetHost,
  hostGadgets,
  vendorCliGadgets,
  vendorCliTool,
} from './vendor.js';
export type { DeclaredCli, RunDefaults, VendorCliInput, VendorCliRef } from './vendor.js';
export { runData } from './run-result.js';
export type { RunData } from './run-result.js';
export { auditRows, auditTable } from '../store/audit-table.js';

// ── Surface 2: the CLI ───────────────────────────────────────────────────────────
export { createCli } from './cli.js';
export type { Cli, CliIo, CliOptions } from './cli.js';
export { AGENT_TOOLS, BUNDLED_TOOLS, PERSON_ONLY_TOOLS, agentTools } from '../commands/index.js';

// ── Surface 3: manifests ─────────────────────────────────────────────────────────
export { SHELL_SAFETY_RULES, anthropicTools, manifestText, mcpTools, openAiTools } from './manifest.js';
export type { ManifestTextOptions } from './manifest.js';
export { jsonSchema } from './schema.js';
export type { JsonSchema } from './schema.js';

// ── Shared pieces hosts may reuse ────────────────────────────────────────────────
export { CliFailure, errorFromThrown } from './envelope.js';
export { renderExample, shellQuote } from './shell.js';
export { type Candidate, damerauLevenshtein, suggest } from './suggest.js';
