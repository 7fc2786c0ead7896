/**
 * What `clibroker run` and `clibroker resume` do once their flags parsed: find the daemon
 * (--socket, $CLIBROKER_SOCKET, the default path), the executor token ($CLIBROKER_EXECUTOR_TOKEN
 * or --token-file: never a flag holding the token), one call, and the answer as the
 * envelope's data or its failure. Loaded only when one of them runs.
 */
import { readFile } from 'node:fs/promises';
import type { CallOutcome } from '../daemon/call.js';
import { callDaemon, type DaemonAddress, settle } from '../daemon/client.js';
import {
  DEFAULT_SOCKET,
  ROUTES,
  type RunAnswer,
  resumePath,
  runAnswer as answer,
} from '../daemon/protocol.js';
import { isBrokerError } from '../errors.js';
import { CliFailure, errorFromThrown, fail } from '../cli/envelope.js';

/** The flags both commands share. */
export interface DaemonFlags {
  socket?: string;
  tokenFile?: string;
}

export type { RunAnswer } from '../daemon/protocol.js';

async function address(flags: DaemonFlags, env: NodeJS.ProcessEnv): Promise<DaemonAddress> {
  const socket = flags.socket ?? (env['CLIBROKER_SOCKET'] || DEFAULT_SOCKET);
  let token = env['CLIBROKER_EXECUTOR_TOKEN'] || undefined;
  if (flags.tokenFile !== undefined) {
    try {
      token = (await readFile(flags.tokenFile, 'utf8')).trim();
    } catch (e) {
      // never the path in the answer: a token pasted in place of a path would be echoed
      fail(
        'flag-parse',
        `cannot read the --token-file file (${(e as NodeJS.ErrnoException).code ?? 'unreadable'})`,
        {
          flag: 'token-file',
          hint: 'pass the path of a file holding the executor token, or set $CLIBROKER_EXECUTOR_TOKEN',
        },
      );
    }
    if (!token)
      fail('flag-parse', 'the --token-file file is empty', {
        flag: 'token-file',
        hint: 'the file holds the executor token the operator issued',
      });
  }
  return { socket, ...(token ? { token } : {}) };
}

/** A failure the daemon answered, as the envelope error; a pending approval says who acts next. */
function failed(e: unknown): never {
  if (!isBrokerError(e) || e.code !== 'CLI_APPROVAL_PENDING') throw e;
  const error = errorFromThrown(e);
  const id = typeof e.details?.['approvalId'] === 'string' ? e.details['approvalId'] : '<approval-id>';
  throw new CliFailure({
    ...error,
    hint: `a person approves this exact request (the operator runs clibroker approvals approve --config <file> --id ${id} --by <who>); then clibroker resume ${id} runs the command again, once`,
  });
}

/** `clibroker run <tool> -- <args…>`: only the tool, the arguments and the stdin go to the daemon. */
export async function runViaDaemon(
  p: DaemonFlags & { tool: string; args: string[]; stdin?: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunAnswer> {
  const addr = await address(p, env);
  const input = { args: p.args, ...(p.stdin !== undefined ? { stdin: p.stdin } : {}) };
  return answer(
    await callDaemon<RunAnswer>(addr, 'POST', ROUTES.execute, { toolId: p.tool, input }).catch(failed),
  );
}

/**
 * An exchange the fast path of `run` and `resume` made itself (src/commands/fast-run.ts),
 * answered as `runViaDaemon` answers a call: the same settling, the same pending-approval hint.
 */
export function settledAnswer(socket: string, outcome: CallOutcome): RunAnswer {
  let result: RunAnswer;
  try {
    result = settle<RunAnswer>(socket, outcome);
  } catch (e) {
    failed(e);
  }
  return answer(result);
}

/** `clibroker resume <approval-id>`: the approved command, run again once by the daemon. */
export async function resumeViaDaemon(
  p: DaemonFlags & { approval: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunAnswer> {
  const addr = await address(p, env);
  return answer(await callDaemon<RunAnswer>(addr, 'POST', resumePath(p.approval)).catch(failed));
}
