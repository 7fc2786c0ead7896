/**
 * The bundled `clibroker` entry (esbuild → dist/bundle/clibroker.mjs, run by
 * bin/clibroker.js). Only the router, help and tokenizer load at start; zod and every
 * back-end are dynamic imports, so cold `--help` costs little more than `node -e 0`.
 */
import { readFile } from 'node:fs/promises';
import { isatty } from 'node:tty';
import { createCli, type CliIo } from './cli.js';
import { BUNDLED_TOOLS } from './commands/index.js';

// isatty(0) rather than process.stdin.isTTY: touching process.stdin opens the stream.
const io: CliIo = {
  stdout: (s) => void process.stdout.write(s),
  stderr: (s) => void process.stderr.write(s),
  stdinIsTTY: isatty(0),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
  readFile: (p) => readFile(p, 'utf8'),
};

const cli = createCli({
  blurb: 'run vendor CLIs (gh, az, curl) for AI agents through a governing HTTPS proxy',
  version: '0.1.0',
  tools: BUNDLED_TOOLS,
});

// exitCode, not process.exit(): stdout must drain when it is a pipe.
process.exitCode = await cli.run(process.argv.slice(2), io);
