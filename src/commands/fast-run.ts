/**
 * The fast path of `clibroker run` and `clibroker resume`, the calls an agent pays on every
 * turn (esbuild → dist/commands/fast-run.js; bin/clibroker.js hands it those two commands). It
 * loads node:net, the socket directory's check and the exchange (src/daemon/call.ts): not the
 * router, the command definitions or the error catalogue, whose loading was most of a call's
 * own cost (docs/benchmarks.md, "The agent's paths").
 *
 * It takes only what it understands whole, the call as an agent writes it with the daemon's
 * environment set, and answers it byte for byte as the router does:
 *
 *   run <tool> [--stdin-file <path|-> | --stdin-file=<path|->] -- <args…>
 *   resume <approval-id>
 *
 * with $CLIBROKER_SOCKET set (and $CLIBROKER_EXECUTOR_TOKEN when the daemon wants one).
 * Everything else goes to the router (`./program.ts`) before a byte reaches the daemon:
 * another flag or order, a help word, a mistake, a value over its limit, no socket in the
 * environment, a stdin that is a terminal, an unreadable file, an unsafe socket directory, a
 * socket that does not connect. The router then reads, checks and answers as it always does
 * (stdin already read is handed to it). Once the connection is made there is no going back:
 * the daemon's answer is rendered here, a failure with the catalogue imported only then, so a
 * call never runs twice.
 */
import { readFile } from 'node:fs/promises';
import { type CallOutcome, exchange, resultOf, sendableToken, socketDirProblem } from '../daemon/call.js';
import { ROUTES, type RunAnswer, resumePath, runAnswer } from '../daemon/protocol.js';
import type { Env } from './env.js';

/**
 * The limits of `run`'s and `resume`'s parameters (src/commands/run.ts): a value over one goes
 * to the router, whose validation explains it (tests/cli/fast-run.test.ts keeps them equal).
 */
export const LIMITS = {
  tool: 256,
  approval: 128,
  args: 256,
  argBytes: 32 * 1024,
  stdinBytes: 1024 * 1024,
} as const;

/** A call the fast path takes: where it goes, and what it sends. */
export interface FastCall {
  socket: string;
  token: string | undefined;
  /** the daemon's route */
  path: string;
  /** `run`'s tool and arguments; absent for `resume` */
  run?: { tool: string; args: string[]; stdinFrom?: string };
}

// a tool's name or id (gh_cli, github:cli:gh) or an approval id: a word no parse could read
// otherwise (no dash first, so never a flag or a help word; no space, quote or escape)
const WORD_RE = /^[A-Za-z0-9_][A-Za-z0-9_.:@+-]*$/;

const STDIN_FLAG = '--stdin-file';

/** The call `argv` makes when the fast path takes it whole; undefined sends it to the router. */
export function recognise(argv: readonly string[], env: Env): FastCall | undefined {
  const socket = env['CLIBROKER_SOCKET'];
  const token = env['CLIBROKER_EXECUTOR_TOKEN'] || undefined;
  if (!socket || (token !== undefined && !sendableToken(token))) return undefined;
  const [command, word, ...rest] = argv;
  if (word === undefined || !WORD_RE.test(word) || word === 'help') return undefined;
  if (command === 'resume')
    return rest.length === 0 && word.length <= LIMITS.approval
      ? { socket, token, path: resumePath(word) }
      : undefined;
  if (command !== 'run' || word.length > LIMITS.tool) return undefined;
  let stdinFrom: string | undefined;
  let dd = 0;
  if (rest[0] === STDIN_FLAG) [stdinFrom, dd] = [rest[1], 2];
  else if (rest[0]?.startsWith(`${STDIN_FLAG}=`)) [stdinFrom, dd] = [rest[0].slice(STDIN_FLAG.length + 1), 1];
  // a path, or - for this process's stdin; never something that reads as a flag or help
  if (stdinFrom !== undefined && stdinFrom !== '-' && (stdinFrom === '' || stdinFrom.startsWith('-')))
    return undefined;
  if (rest[dd] !== '--') return undefined;
  const args = rest.slice(dd + 1);
  if (args.length > LIMITS.args || args.some((a) => Buffer.byteLength(a) > LIMITS.argBytes)) return undefined;
  return {
    socket,
    token,
    path: ROUTES.execute,
    run: { tool: word, args, ...(stdinFrom !== undefined ? { stdinFrom } : {}) },
  };
}

/** All of this process's stdin, read as the router's io reads it (src/commands/node-io.ts). */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The invocation, through the router; `stdin` is what this process's stdin held, once read here. */
async function toRouter(argv: readonly string[], stdin?: string): Promise<void> {
  const [{ runProgram }, { nodeIo }] = await Promise.all([import('./program.js'), import('./node-io.js')]);
  const io = nodeIo();
  process.exitCode = await runProgram(
    argv,
    stdin === undefined ? io : { ...io, readStdin: async () => stdin },
  );
}

/**
 * The text for the tool's stdin, or why the router must take the call: `stdin` is set once
 * this process's stdin was read, so the router gets it.
 */
async function stdinText(from: string): Promise<{ text?: string; stdin?: string; refused?: true }> {
  if (from === '-') {
    // a terminal would wait for a person: the router refuses that
    const { isatty } = await import('node:tty');
    if (isatty(0)) return { refused: true };
    const stdin = await readStdin();
    return Buffer.byteLength(stdin) > LIMITS.stdinBytes ? { stdin, refused: true } : { text: stdin, stdin };
  }
  try {
    const text = await readFile(from, 'utf8');
    return Buffer.byteLength(text) > LIMITS.stdinBytes ? { refused: true } : { text };
  } catch {
    return { refused: true };
  }
}

/** The daemon's answer as the router writes it: one envelope on stdout, a failure's line on stderr. */
async function render(socket: string, outcome: CallOutcome): Promise<void> {
  const ok = resultOf(outcome);
  if (ok) {
    let data: RunAnswer | undefined;
    try {
      data = runAnswer(ok.result as RunAnswer);
    } catch {
      // a result that is no object: the router's rendering of the same failure, below
    }
    if (data) {
      process.stdout.write(`${JSON.stringify({ success: true, data })}\n`);
      process.exitCode = 0;
      return;
    }
  }
  const [{ settledAnswer }, { errorFromThrown, exitCode, failure, proseLine }] = await Promise.all([
    import('./daemon-call.js'),
    import('../cli/envelope.js'),
  ]);
  let data: RunAnswer;
  try {
    data = settledAnswer(socket, outcome);
  } catch (e) {
    // as the router renders what a command threw: no example (the words were right), no retry
    const out = failure(errorFromThrown(e));
    process.stdout.write(`${JSON.stringify(out)}\n`);
    if (!out.success) process.stderr.write(`${proseLine('clibroker', out.error)}\n`);
    process.exitCode = exitCode(out);
    return;
  }
  process.stdout.write(`${JSON.stringify({ success: true, data })}\n`);
  process.exitCode = 0;
}

/** One invocation of `run` or `resume`: taken here whole, or handed to the router unsent. */
export async function fastRun(argv: readonly string[], env: Env = process.env): Promise<void> {
  const call = recognise(argv, env);
  if (!call) return toRouter(argv);
  let text: string | undefined;
  let stdin: string | undefined;
  if (call.run?.stdinFrom !== undefined) {
    const got = await stdinText(call.run.stdinFrom);
    if (got.refused) return toRouter(argv, got.stdin);
    ({ text, stdin } = got);
  }
  // the client's own check, before anything is sent: its failure is the router's to tell
  if (await socketDirProblem(call.socket)) return toRouter(argv, stdin);
  const payload = call.run
    ? Buffer.from(
        JSON.stringify({
          toolId: call.run.tool,
          input: { args: call.run.args, ...(text !== undefined ? { stdin: text } : {}) },
        }),
        'utf8',
      )
    : undefined;
  const outcome = await exchange(
    { socket: call.socket, ...(call.token ? { token: call.token } : {}) },
    'POST',
    call.path,
    payload,
  );
  // not connected: nothing went out, and the router says why
  if (!outcome.sent) return toRouter(argv, stdin);
  await render(call.socket, outcome);
}
