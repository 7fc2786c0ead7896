/**
 * `clibroker agent manifest`: the bundled CLI's own tool manifest, as system-prompt text or
 * as MCP / OpenAI / Anthropic tool lists, generated from the same definitions as help.
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
    const [m, { BUNDLED_TOOLS }] = await Promise.all([import('../manifest.js'), import('./index.js')]);
    if (p.format === 'mcp') return m.mcpTools(BUNDLED_TOOLS);
    if (p.format === 'openai') return m.openAiTools(BUNDLED_TOOLS);
    if (p.format === 'anthropic') return m.anthropicTools(BUNDLED_TOOLS);
    return m.manifestText(BUNDLED_TOOLS);
  },
});
