/**
 * Calling approval watchers (`Store.watchApprovals`), shared by both backends: each watcher
 * is called in turn, and one that throws (or returns a promise that rejects) is ignored, so
 * neither the store nor the other watchers are disturbed by it.
 */
export function callWatchers(watchers: ReadonlySet<(id: string) => void>, id: string): void {
  // a copy: a watcher may unsubscribe (or subscribe another) while being called
  for (const fn of [...watchers]) {
    try {
      const r = fn(id) as unknown;
      if (r !== null && typeof r === 'object' && typeof (r as Promise<unknown>).then === 'function')
        (r as Promise<unknown>).then(undefined, () => {});
    } catch {
      // a watcher's failure is its own
    }
  }
}
