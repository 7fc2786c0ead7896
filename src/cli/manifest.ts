/**
 * The agent's tool manifest: system-prompt text for agents that drive the CLI
 * through a shell, and JSON tool lists (MCP, OpenAI, Anthropic) for hosts that call the
 * gadgets in-process. Both come from the same definitions as help and validation.
 */
import { commandPath, gadgetName } from './define.js';
import { flagLines } from './flags.js';
import { ENVELOPE_LINES, usageLine } from './help.js';
import { jsonSchema, type JsonSchema } from './schema.js';
import { renderExample } from './shell.js';
import type { AnyTool } from './types.js';

/** The rules an agent needs to build commands that the shell passes through unchanged. */
export const SHELL_SAFETY_RULES = [
  'Pass JSON as ONE single-quoted argument: --comments \'[{"path":"a.ts","body":"Looks good"}]\'. Keys stay double-quoted; nothing inside single quotes is expanded.',
  "Inside single quotes write a literal ' as '\\''. Quote any value with spaces or any of $ ` \\ \" ' ! * ? [ ] { } ( ) < > | & ; # ~.",
  'One stdin per invocation: at most one flag may read stdin (--<param>-file -). With two payloads, write one of them to a file and pass its path.',
  'Large or multi-line payloads go in a file: --<param>-file payload.json (- reads stdin); never paste them through echo.',
  'Booleans: --flag, --no-flag, or --flag true|false. Lists: repeat the flag (--label a --label b). Negative numbers are values: --offset -5.',
  "Everything after a bare -- goes to the vendor CLI unchanged, one shell word per argument; don't wrap it in sh -c.",
  'Read the JSON envelope on stdout; on failure, error.retry (when present) is your own command corrected, to run as is; error.hint and error.example say what to change otherwise.',
];

/** One tool's block in the manifest text. */
export function toolText(program: string, def: AnyTool): string {
  const lines = [
    `## ${program} ${commandPath(def).join(' ')}`,
    def.description.trim(),
    '',
    `usage: ${usageLine(program, def)}`,
  ];
  const flags = flagLines(def, '  ');
  if (flags.length) lines.push('flags:', ...flags);
  lines.push(`output: data = ${def.outputShape}`);
  for (const ex of def.examples ?? []) {
    lines.push(
      `# example (${ex.comment}): ${renderExample(program, def, ex.params as Record<string, unknown>)}`,
    );
  }
  return lines.join('\n');
}

/** Options for the text manifest. */
export interface ManifestTextOptions {
  /** the program name agents type; default `clibroker` */
  program?: string;
  /** a first paragraph, e.g. what the deployment is for */
  preamble?: string;
}

/** The system-prompt text: envelope contract, one block per tool, the shell-safety rules. */
export function manifestText(defs: readonly AnyTool[], opts: ManifestTextOptions = {}): string {
  const program = opts.program ?? 'clibroker';
  const parts = [`# ${program} tools`, ''];
  if (opts.preamble) parts.push(opts.preamble, '');
  parts.push(...ENVELOPE_LINES, '');
  for (const d of defs) parts.push(toolText(program, d), '');
  parts.push('## shell-safety rules', ...SHELL_SAFETY_RULES.map((r) => `- ${r}`), '');
  return parts.join('\n');
}

function entries(defs: readonly AnyTool[]): { name: string; description: string; schema: JsonSchema }[] {
  const seen = new Set<string>();
  return defs.map((d) => {
    const name = gadgetName(d);
    // Sanitising can merge names (a.b and a_b); a silent collision would route calls to the wrong tool.
    if (seen.has(name)) throw new Error(`two tools sanitise to the same name '${name}'`);
    seen.add(name);
    return { name, description: d.description.trim(), schema: jsonSchema(d, 'gadget') };
  });
}

/** MCP `tools/list` entries. */
export function mcpTools(
  defs: readonly AnyTool[],
): { name: string; description: string; inputSchema: JsonSchema }[] {
  return entries(defs).map((e) => ({ name: e.name, description: e.description, inputSchema: e.schema }));
}

/** OpenAI chat-completions / responses function tools. */
export function openAiTools(
  defs: readonly AnyTool[],
): { type: 'function'; function: { name: string; description: string; parameters: JsonSchema } }[] {
  return entries(defs).map((e) => ({
    type: 'function',
    function: { name: e.name, description: e.description, parameters: e.schema },
  }));
}

/** Anthropic Messages API tools. */
export function anthropicTools(
  defs: readonly AnyTool[],
): { name: string; description: string; input_schema: JsonSchema }[] {
  return entries(defs).map((e) => ({ name: e.name, description: e.description, input_schema: e.schema }));
}

/** A configured vendor CLI as the manifest describes it (a host's `ToolListing`, structurally). */
export interface ConfiguredToolRef {
  /** `<extension>:cli:<id>` */
  readonly id: string;
  /** `<id>_cli` */
  readonly name: string;
  readonly description: string;
}

/** What a configured tool's run answers, and how its failures read. */
export const CONFIGURED_OUTPUT =
  'data = {exitCode, stdout, stderr, truncated, runId, cliTier, outlivedRefusals?}; a non-zero exitCode is data. A refused request fails the whole call, except a host outside egress that the CLI outlived (an update check): that call succeeds and lists it in data.outlivedRefusals. Failure codes: POLICY_BLOCKED for a tier denial or a host outside egress (error.details.policyCode CLI_REQUEST_TIER_DENIED or CLI_EGRESS_HOST_DENIED; no argument changes the tier, the message says who can), CLI_APPROVAL_PENDING with error.details.approvalId (a person must approve; then resume it), CLI_CONFIRMATION_REQUIRED / CLI_CONFIRMATION_NOT_APPROVABLE / CLI_CONFIRMATION_UNREVIEWABLE / CLI_CONFIRMATION_AFTER_WRITE, EXEC_ACTION_CONFIRMATION_DECLINED, CLI_TIMEOUT, INVALID_TOOL_INPUT. error.details.outcomeUnknown: the call may have changed something before it failed; error.details.unknownOutcomes names the writes to check with a read before repeating anything.';

/**
 * The system-prompt text for the tools a configuration offers, called through the thin
 * client: `clibroker run <tool> -- <args…>`. Nothing the agent can pass selects the
 * configuration, the credential or the tier, so none of that appears here.
 */
export function configuredToolsText(
  tools: readonly ConfiguredToolRef[],
  opts: ManifestTextOptions = {},
): string {
  const program = opts.program ?? 'clibroker';
  const parts = [`# ${program} tools`, ''];
  if (opts.preamble) parts.push(opts.preamble, '');
  parts.push(...ENVELOPE_LINES, '');
  for (const t of tools) {
    parts.push(
      `## ${t.name} (tool id ${t.id})`,
      t.description.trim(),
      '',
      `usage: ${program} run ${t.name} [--stdin-file <path|->] -- <args…>`,
      `output: ${CONFIGURED_OUTPUT}`,
      '',
    );
  }
  parts.push(
    `## ${program} resume <approval-id>`,
    'Run the command of an approved request again, once, with that one request allowed (after a person approved error.details.approvalId).',
    '',
    `usage: ${program} resume <approval-id>`,
    `output: the same as ${program} run`,
    '',
  );
  parts.push('## shell-safety rules', ...SHELL_SAFETY_RULES.map((r) => `- ${r}`), '');
  return parts.join('\n');
}
