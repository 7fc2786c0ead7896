/**
 * What a command that changes state answers with: `{status, updatedAt, …ids}`. Built here for
 * every such command (`approvals approve|reject`, `tiers set`), so they answer alike, and so
 * none answers with a time an agent cannot read: `updatedAt` is always ISO 8601 in UTC
 * (`2025-01-01T12:00:00.000Z`), and a missing or unreadable one is refused.
 *
 * Loaded only inside a command's `run`, like every back-end of the bundled commands.
 */
import { BrokerError } from '../errors.js';

// A date and a time with seconds and a zone: what the store writes. `Date.parse` alone also
// takes `2025`, `May 1` or `1/2/2025`, which are not when anything happened.
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

/** The result of a mutation: its outcome, when it happened, and the ids of what it changed. */
export type MutationResult<S extends string, R> = { status: S; updatedAt: string } & R;

/**
 * `{status, updatedAt, …ids}` for a mutation. `updatedAt` is the time the change was
 * recorded (the store's, not the clock's after the fact), written back as UTC ISO 8601.
 * @throws BrokerError INTERNAL_ERROR when `updatedAt` is missing, empty or not an ISO 8601
 *   time: the change may be recorded, but its answer would mislead, so it is not given
 */
export function mutationResult<S extends string, R extends Record<string, unknown>>(
  status: S,
  updatedAt: string | Date | undefined,
  ids: R & { status?: never; updatedAt?: never },
): MutationResult<S, R> {
  const time =
    updatedAt instanceof Date
      ? updatedAt.getTime()
      : typeof updatedAt === 'string' && ISO_8601.test(updatedAt)
        ? Date.parse(updatedAt)
        : Number.NaN;
  if (Number.isNaN(time)) {
    throw new BrokerError('INTERNAL_ERROR', {
      details: {
        field: 'updatedAt',
        status,
        got: updatedAt instanceof Date ? 'Invalid Date' : String(updatedAt).slice(0, 64),
      },
    });
  }
  return { status, updatedAt: new Date(time).toISOString(), ...ids };
}
