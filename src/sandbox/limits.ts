/** Input limits, checked before anything is created or spawned. */
import { brokerError } from '../errors.js';
import { SANDBOX_LIMITS, SANDBOX_PROFILES, type SandboxOptions, type SandboxProfile } from './types.js';

function refuse(reason: string, details: Record<string, unknown>): never {
  // Details carry positions and sizes, never argument values: they may hold secrets.
  throw brokerError('INVALID_TOOL_INPUT', { reason }, { details: { reason, ...details } });
}

function checkArgv(args: unknown, field: string): void {
  if (!Array.isArray(args)) refuse(`${field} must be an array of strings`, { field });
  if (args.length > SANDBOX_LIMITS.maxArgs)
    refuse(`more than ${SANDBOX_LIMITS.maxArgs} arguments`, {
      field,
      count: args.length,
      max: SANDBOX_LIMITS.maxArgs,
    });
  args.forEach((a: unknown, index: number) => {
    if (typeof a !== 'string') refuse(`${field}[${index}] is not a string`, { field, index });
    const bytes = Buffer.byteLength(a);
    if (bytes > SANDBOX_LIMITS.maxArgBytes)
      refuse(`${field}[${index}] is longer than 32 KiB`, {
        field,
        index,
        bytes,
        max: SANDBOX_LIMITS.maxArgBytes,
      });
    // execve cannot carry a NUL; refusing here beats node's ERR_INVALID_ARG_VALUE mid-run.
    if (a.includes('\0')) refuse(`${field}[${index}] contains a NUL byte`, { field, index });
  });
}

/**
 * Checks the caller's input against the run budgets.
 * @returns the deadline in ms and the requested profile
 * @throws BrokerError INVALID_TOOL_INPUT (too many or too long arguments, stdin over 1 MiB, bad deadline);
 *   MANIFEST_INVALID for an image that names no profile
 */
export function checkInput(opts: SandboxOptions): { deadlineMs: number; profile: SandboxProfile } {
  checkArgv(opts.args, 'args');
  if (opts.preamble !== undefined) checkArgv(opts.preamble, 'preamble');
  if (opts.stdin !== undefined) {
    if (!Buffer.isBuffer(opts.stdin)) refuse('stdin must be a Buffer', { field: 'stdin' });
    if (opts.stdin.length > SANDBOX_LIMITS.maxStdinBytes)
      refuse('stdin is larger than 1 MiB', {
        field: 'stdin',
        bytes: opts.stdin.length,
        max: SANDBOX_LIMITS.maxStdinBytes,
      });
  }
  for (const field of ['readOnlyPaths', 'hiddenPaths'] as const) {
    const paths: unknown = opts[field] ?? [];
    if (!Array.isArray(paths)) refuse(`${field} must be an array of absolute paths`, { field });
    for (const [index, p] of paths.entries()) {
      if (typeof p !== 'string' || !p.startsWith('/') || p.includes('\0'))
        refuse(`${field}[${index}] must be an absolute path`, { field, index });
    }
  }
  const deadlineMs = opts.deadlineMs ?? SANDBOX_LIMITS.maxDeadlineMs;
  if (!Number.isFinite(deadlineMs) || deadlineMs <= 0 || deadlineMs > SANDBOX_LIMITS.maxDeadlineMs) {
    refuse('deadline must be more than 0 and at most 270 s', {
      field: 'deadlineMs',
      value: deadlineMs,
      max: SANDBOX_LIMITS.maxDeadlineMs,
    });
  }
  const image = opts.image ?? 'plain';
  if (!(SANDBOX_PROFILES as readonly string[]).includes(image)) {
    const problem = {
      code: 'MANIFEST_FIELD_INVALID',
      path: 'binary.image',
      value: image.slice(0, 80),
      expected: SANDBOX_PROFILES.join(' | '),
    } as const;
    throw brokerError(
      'MANIFEST_INVALID',
      {
        what: `the sandbox profile ${JSON.stringify(problem.value)} (expected ${SANDBOX_PROFILES.join(' or ')})`,
        problems: [problem],
      },
      { details: { problems: [problem] } },
    );
  }
  return { deadlineMs, profile: image as SandboxProfile };
}
