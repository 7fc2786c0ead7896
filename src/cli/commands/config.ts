/**
 * `clibroker config validate`: load an operator configuration exactly as the broker daemon
 * or a host would (secrets looked up, images and manifests hashed, every CLI's credentials
 * planned) and show what it offers, or every problem. The back-end is `src/config`, loaded
 * only when the command runs. An operator's command: `agent manifest` leaves it out.
 *
 * An invalid configuration is a successful validation, as with `manifest validate`:
 * `data.valid` is false and `data.problems` lists every CONFIG_INVALID problem with its
 * code and path (an error envelope has room for one message only).
 */
import { defineTool } from '../define.js';

export const configValidate = defineTool({
  namespace: 'config',
  name: 'validate',
  description: [
    'Validate an operator configuration file as the broker loads it and list the tools it offers, or every problem with its code and path.',
    'Run it as the user the daemon runs as, with its environment: secrets are looked up the way the daemon looks them up (their values are never shown).',
  ].join('\n'),
  parameters: {
    config: { type: 'string', describe: 'the configuration JSON file (docs/config.md)' },
  },
  examples: [
    {
      params: { config: '/etc/clibroker/config.json' },
      comment: 'check the configuration before (re)starting the daemon',
      output: {
        valid: true,
        tools: [{ id: 'github:cli:gh', name: 'gh_cli', image: 'gh', profile: 'isolated' }],
        withheld: [],
        warnings: [],
      },
    },
  ],
  outputShape:
    '{valid: true, file: string, tools: {id, name, image, profile}[], withheld: {id, name, code, message}[], warnings: {path, message}[]} | {valid: false, problems: {code, path, message}[]}',
  async run(p) {
    const { validateConfigFile } = await import('../../config/validate.js');
    return validateConfigFile(p.config);
  },
});
