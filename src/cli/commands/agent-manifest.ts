/**
 * `clibroker agent manifest`: the bundled CLI's own tool manifest, as system-prompt text or
 * as MCP / OpenAI / Anthropic tool lists, generated from the same definitions as help.
 * `approvals approve|reject` are left out: they are a person's decision, not an agent's.
 */
import { defineTool } from '../define.js';

export const agentManifest = defineTool({
  namespace: 'agent',
  name: 'manifest',
  description: "Print the tool manifest an agent needs to drive this CLI: system-prompt text, or a JSON tool list.",
  parameters: {
    format: {
      type: 'enum',
      values: ['text', 'mcp', 'openai', 'anthropic'],
      default: 'text',
      describe: 'text for a system prompt; mcp, openai or anthropic for a JSON tool list',
    },
  },
  examples: [
    { params: { format: 'text' }, comment: 'the system-prompt text (read it with jq -r .data)' },
    { params: { format: 'mcp' }, comment: 'MCP tools/list entries' },
  ],
  outputShape: 'string (format text) or [{name, description, inputSchema | parameters | input_schema}]',
  async run(p) {
    // approvals approve|reject are a person's decision: not offered to agents
    const [m, { agentTools }] = await Promise.all([import('../manifest.js'), import('./index.js')]);
    const tools = agentTools();
    if (p.format === 'mcp') return m.mcpTools(tools);
    if (p.format === 'openai') return m.openAiTools(tools);
    if (p.format === 'anthropic') return m.anthropicTools(tools);
    return m.manifestText(tools);
  },
});
