/**
 * The `clibroker` binary's entry (esbuild → dist/commands/main.js, with the chunks it shares with
 * the library; run by bin/clibroker.js). Only the router, help and tokenizer load at start; zod and every
 * back-end are dynamic imports, so cold `--help` costs little more than `node -e 0`.
 */
import { createCli } from '../cli/cli.js';
import { AGENT_TOOLS, BUNDLED_TOOLS } from './index.js';
import { ENV } from './env.js';
import { nodeIo } from './node-io.js';

const cli = createCli({
  blurb: 'run vendor CLIs (gh, az, curl) for AI agents through a governing HTTPS proxy',
  version: '0.1.0',
  tools: BUNDLED_TOOLS,
  // an agent's shell: its typos are answered from what `agent manifest` offers it
  ...(process.env[ENV.surface] === 'agent' ? { offered: AGENT_TOOLS } : {}),
});

// exitCode, not process.exit(): stdout must drain when it is a pipe.
process.exitCode = await cli.run(process.argv.slice(2), nodeIo());
