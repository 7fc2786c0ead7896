/**
 * `clibroker agent manifest`: the tool manifest an agent is handed, as system-prompt text or
 * as MCP / OpenAI / Anthropic tool lists, generated from the same definitions as help.
 * With `--config`, the `<id>_cli` tools the operator configuration offers (each described
 * from its help tree, input `{args, stdin?}`); without it, the bundled CLI's agent-facing
 * commands. Operator commands (approving, setting tiers, configuring, running with an explicit
 * manifest) are never in it.
 */
import { defineTool } from '../cli/define.js';

export const agentManifest = defineTool({
  namespace: 'agent',
  name: 'manifest',
  description:
    "Print the tool manifest an agent needs: system-prompt text, or a JSON tool list. With --config, the vendor CLI tools the operator's configuration offers.",
  parameters: {
    format: {
      type: 'enum',
      values: ['text', 'mcp', 'openai', 'anthropic'],
      default: 'text',
      describe: 'text for a system prompt; mcp, openai or anthropic for a JSON tool list',
    },
    config: {
      type: 'string',
      optional: true,
      describe:
        'the operator configuration: list the <id>_cli tools it offers (run by the operator, who can read it; the agent gets the output)',
    },
  },
  examples: [
    { params: { format: 'text' }, comment: 'the system-prompt text (read it with jq -r .data)' },
    {
      params: { format: 'mcp', config: '/etc/clibroker/config.json' },
      comment: 'MCP tools/list entries of the configured CLIs',
    },
  ],
  outputShape: 'string (format text) or [{name, description, inputSchema | parameters | input_schema}]',
  async run(p) {
    const m = await import('../cli/manifest.js');
    if (p.config !== undefined) {
      const [{ loadConfig }, { offeredTools }, { vendorCliTool }] = await Promise.all([
        import('../config/load.js'),
        import('../host/host.js'),
        import('../cli/vendor.js'),
      ]);
      // the tools' names, descriptions and inputs need no credential: no secret is read
      const { offered } = await offeredTools(await loadConfig(p.config, { readSecrets: false }));
      if (p.format === 'text') return m.configuredToolsText(offered);
      const defs = offered.map((t) =>
        vendorCliTool({ id: t.cliId, description: t.description }, () => undefined),
      );
      if (p.format === 'mcp') return m.mcpTools(defs);
      if (p.format === 'openai') return m.openAiTools(defs);
      return m.anthropicTools(defs);
    }
    const { agentTools } = await import('./agent-tools.js');
    const tools = agentTools();
    if (p.format === 'mcp') return m.mcpTools(tools);
    if (p.format === 'openai') return m.openAiTools(tools);
    if (p.format === 'anthropic') return m.anthropicTools(tools);
    return m.manifestText(tools);
  },
});
