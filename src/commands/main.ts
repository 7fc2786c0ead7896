/**
 * The `clibroker` binary's entry (esbuild → dist/commands/main.js, with the chunks it shares with
 * the library; run by bin/clibroker.js). Only the router, help and tokenizer load at start; zod and every
 * back-end are dynamic imports, so cold `--help` costs little more than `node -e 0`. An
 * agent's `run` and `resume` usually start elsewhere: `./fast-run.ts`, which comes here only
 * for what it does not take itself.
 */
import { nodeIo } from './node-io.js';
import { runProgram } from './program.js';

// exitCode, not process.exit(): stdout must drain when it is a pipe.
process.exitCode = await runProgram(process.argv.slice(2), nodeIo());
