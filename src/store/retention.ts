/**
 * The periodic prune both backends run when opened with `retentionDays` (the configuration's
 * `storeRetention.days`): once at open, then hourly. Hourly is often enough for a limit
 * counted in days, and rare enough that the prune's own audit events (one per prune) stay few.
 */
import type { PruneResult } from './types.js';

/** How often a store with a retention prunes. */
export const RETENTION_INTERVAL_MS = 3_600_000;

/** Who the periodic prune's `store.events.pruned` event names. */
export const RETENTION_WHO = 'retention';

const DAY_MS = 86_400_000;

/**
 * Prune now and every hour: events older than `days` days before the clock's reading.
 * Failures go to `onError` (the store keeps working). The timer is unref'd: it never keeps
 * the process alive. Returns the first prune (settled, never rejected) and the timer.
 */
export function startRetention(
  prune: (input: { before: Date; dryRun: false; who: string }) => Promise<PruneResult>,
  days: number,
  now: () => Date,
  onError: (err: unknown) => void,
): { first: Promise<void>; timer: NodeJS.Timeout } {
  const once = (): Promise<void> => {
    let pruned: Promise<PruneResult>;
    try {
      pruned = prune({
        before: new Date(now().getTime() - days * DAY_MS),
        dryRun: false,
        who: RETENTION_WHO,
      });
    } catch (err) {
      pruned = Promise.reject(err);
    }
    return pruned.then(
      () => undefined,
      (err: unknown) => onError(err),
    );
  };
  const timer = setInterval(once, RETENTION_INTERVAL_MS);
  timer.unref();
  return { first: once(), timer };
}
