/**
 * The bundled `clibroker` program: the router over every command, as the binary's entry
 * (`./main.ts`) runs it and as the fast path of `run` and `resume` (`./fast-run.ts`) hands it
 * whatever it does not take itself.
 */
import { createCli } from '../cli/cli.js';
import type { CliIo } from '../cli/inputs.js';
import { ENV } from './env.js';
import { AGENT_TOOLS, BUNDLED_TOOLS } from './index.js';

/** Runs one invocation through the router; returns the exit code. */
export function runProgram(argv: readonly string[], io: CliIo): Promise<number> {
  const cli = createCli({
    blurb: 'run vendor CLIs (gh, az, curl) for AI agents through a governing HTTPS proxy',
    version: '0.1.0',
    tools: BUNDLED_TOOLS,
    // an agent's shell: its typos are answered from what `agent manifest` offers it
    ...(process.env[ENV.surface] === 'agent' ? { offered: AGENT_TOOLS } : {}),
  });
  return cli.run(argv, io);
}
