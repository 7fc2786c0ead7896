/**
 * The CliIo of a real process: stdout/stderr writes, stdin read only on demand, and the
 * terminal check done with isatty(0) — touching `process.stdin` would open the stream.
 */
import { readFile } from 'node:fs/promises';
import { isatty } from 'node:tty';
import type { CliIo } from '../cli/inputs.js';

/** The process's own io. */
export function nodeIo(): CliIo {
  return {
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
}
