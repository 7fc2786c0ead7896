/**
 * The agent's input, checked before anything else happens: exactly `{args, stdin?}` within
 * the sandbox's budgets, and the host's call options. Messages name fields and limits, never
 * the values (an argument may hold anything).
 */
import { brokerError } from '../errors.js';
import { type ApprovalContext, TIER_SOURCES, type TierSource } from '../policy/index.js';
import { SANDBOX_LIMITS } from '../sandbox/types.js';
import type { CallOptions, ToolInput } from './types.js';

const CONTEXTS: readonly ApprovalContext[] = [
  'agent-step',
  'agent-step-never-asks',
  'chat',
  'api',
  'tool-block',
  'scheduled',
];

function invalid(message: string, details: Record<string, unknown>): never {
  throw brokerError('INVALID_TOOL_INPUT', { reason: `${message} Nothing was run.` }, { details });
}

/**
 * @throws BrokerError INVALID_TOOL_INPUT for anything but `{args: string[], stdin?: string}`
 *   within 256 arguments × 32 KiB and 1 MiB of stdin (UTF-8 bytes)
 */
export function checkToolInput(input: unknown): ToolInput {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    invalid('the input must be an object {args: string[], stdin?: string}.', { expected: '{args, stdin?}' });
  }
  const o = input as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => k !== 'args' && k !== 'stdin');
  if (extra.length > 0) {
    const shown = extra.slice(0, 8).map((k) => k.slice(0, 40));
    invalid(
      `the input takes only args and stdin; ${shown.join(', ')}${extra.length > 8 ? ', …' : ''} cannot be passed (the tier, the context and approvals are the host's, never the agent's).`,
      {
        fields: shown,
      },
    );
  }
  const { maxArgs, maxArgBytes, maxStdinBytes } = SANDBOX_LIMITS;
  const args = o['args'];
  if (!Array.isArray(args))
    invalid('args must be an array of strings (one element per argument, no shell).', { field: 'args' });
  if (args.length > maxArgs)
    invalid(`args has ${args.length} elements; at most ${maxArgs} are allowed.`, {
      field: 'args',
      limit: maxArgs,
    });
  for (let i = 0; i < args.length; i++) {
    const a: unknown = args[i];
    if (typeof a !== 'string') invalid(`args[${i}] is not a string.`, { field: `args[${i}]` });
    if (Buffer.byteLength(a) > maxArgBytes)
      invalid(`args[${i}] is over ${maxArgBytes / 1024} KiB in UTF-8.`, {
        field: `args[${i}]`,
        limit: maxArgBytes,
      });
  }
  const stdin = o['stdin'];
  if (stdin !== undefined) {
    if (typeof stdin !== 'string') invalid('stdin must be a string.', { field: 'stdin' });
    if (Buffer.byteLength(stdin) > maxStdinBytes)
      invalid(`stdin is over ${maxStdinBytes / (1024 * 1024)} MiB in UTF-8.`, {
        field: 'stdin',
        limit: maxStdinBytes,
      });
  }
  return { args: [...(args as string[])], ...(stdin !== undefined ? { stdin: stdin as string } : {}) };
}

/** The host's own options; a wrong value is the host's bug, refused with the field named. */
export function checkCallOptions(opts: unknown): Required<CallOptions> {
  const o = (opts ?? {}) as Record<string, unknown>;
  if (typeof o !== 'object' || Array.isArray(o))
    invalid('the call options must be an object {cliTier?, context?, tierSource?}.', { field: 'options' });
  const extra = Object.keys(o).filter((k) => k !== 'cliTier' && k !== 'context' && k !== 'tierSource');
  if (extra.length > 0)
    invalid(`unknown call option(s) ${extra.slice(0, 8).join(', ')}.`, { fields: extra.slice(0, 8) });
  const cliTier = o['cliTier'] ?? 'read';
  if (cliTier !== 'read' && cliTier !== 'write')
    invalid("options.cliTier must be 'read' or 'write'.", { field: 'options.cliTier' });
  const context = o['context'] ?? 'agent-step';
  if (!CONTEXTS.includes(context as ApprovalContext))
    invalid(`options.context must be one of ${CONTEXTS.join(', ')}.`, { field: 'options.context' });
  const tierSource = o['tierSource'] ?? 'caller';
  if (!TIER_SOURCES.includes(tierSource as TierSource))
    invalid(`options.tierSource must be one of ${TIER_SOURCES.join(', ')}.`, { field: 'options.tierSource' });
  return { cliTier, context: context as ApprovalContext, tierSource: tierSource as TierSource };
}
