/** What a macro scenario is: what it measures on a running path, and the goals docs/benchmarks.md states. */
import type { BenchEnv, RunningPath } from '../adapters/types.js';

export interface Goal {
  /** value: the figure itself; ratio: figure / direct's; added: figure − direct's */
  on: 'value' | 'ratio' | 'added';
  op: '<=' | '>=';
  target: number;
  /**
   * compare with this path's same figure in the same run instead of the baseline (`ratio`
   * only), e.g. `nginx`; no verdict when that path did not run
   */
  vs?: string;
  /**
   * a target made of other figures of the same run (`value` only): the target and how it was
   * made, or undefined when a figure it needs is missing
   */
  budget?(
    figure: (path: string, key: string) => number | undefined,
  ): { target: number; text: string } | undefined;
}

export interface MetricDef {
  key: string;
  label: string;
  unit: string;
  digits: number;
  /** a goal of docs/benchmarks.md (checked for proxied paths) */
  goal?: Goal;
  /** the metric is about the proxy process (CPU, RSS): direct has none */
  proxyOnly?: boolean;
  /** only these paths have the figure (others get no row) */
  paths?: readonly string[];
}

export type Figures = Record<string, number>;

export interface Scenario {
  id: string;
  title: string;
  metrics: MetricDef[];
  /**
   * Rounds over all paths, interleaved, each on a fresh process; every figure is the median of
   * the rounds. Short scenarios use several so a burst of load from a neighbour on a shared
   * machine does not land on one path only.
   */
  rounds?: number;
  /**
   * the egress list the proxied paths are started with (clibroker's session); when absent,
   * api.bench.example and S4's names
   */
  egress?: readonly string[];
  /** only these paths run it (others print "n/a"); all when absent */
  paths?: readonly string[];
  /** measure on a freshly started path */
  run?(path: RunningPath, env: BenchEnv): Promise<Figures>;
  /** measure without a running path (S5 starts its own processes) */
  runStandalone?(pathName: string, env: BenchEnv): Promise<Figures>;
}
