/** Small statistics over samples. */

export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const s = [...samples].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}

export const median = (samples: readonly number[]): number => quantile(samples, 0.5);

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
