/**
 * One interface for every path the bench measures: the
 * direct baseline, the plain tunnel, clibroker and each peer. A scenario only sees a Route
 * (how to open a connection) and, for proxies, the process to read CPU and memory from.
 */
import type { Route } from '../lib/client.js';

export interface BenchEnv {
  upstreamPort: number;
  upstreamCaPem: string;
  /** the upstream CA as a file, for proxies configured by path */
  upstreamCaFile: string;
  /** JSON list of every bench host name (egress for clibroker) */
  hostsFile: string;
  /** bench/.cache: bundled children, peer CAs kept between runs */
  cacheDir: string;
  /** bundled child scripts, by name (servers/<name>.ts → <name>.mjs) */
  script(name: string): string;
  /** where --cpu-prof writes, when profiling is asked for */
  profileDir: string | undefined;
  /** extra node flags for the node proxies (BENCH_CHILD_NODE_ARGS), for experiments */
  childNodeArgs: readonly string[];
}

export interface RunningPath {
  route: Route;
  /** the proxy's process (undefined for direct) */
  pid?: number;
  /** CPU time of the proxy process so far, µs */
  cpuMicros?(): Promise<number>;
  /** process.memoryUsage() of a node proxy (to tell live buffers from garbage awaiting GC) */
  memory?(): Promise<NodeJS.MemoryUsage>;
  stop(): Promise<void>;
}

export interface PathAdapter {
  readonly name: string;
  /** what it is in the comparison */
  readonly role: 'baseline' | 'floor' | 'subject' | 'peer';
  /** undefined when it can run here; otherwise why the row is skipped */
  skipReason(env: BenchEnv): Promise<string | undefined>;
  start(env: BenchEnv): Promise<RunningPath>;
}
