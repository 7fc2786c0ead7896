/** Paths that are a bundled node child of the bench (tunnel, clibroker, http-mitm-proxy). */
import { spawnNodeChild } from '../lib/proc.js';
import type { BenchEnv, RunningPath } from './types.js';

export async function startNodeChild(
  env: BenchEnv,
  script: string,
  args: readonly string[],
  opts: { profile?: boolean; upstreamCa: boolean },
): Promise<RunningPath> {
  const execArgv = [
    ...(opts.profile && env.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${env.profileDir}`] : []),
    ...env.childNodeArgs,
  ];
  const child = await spawnNodeChild(
    env.script(script),
    ['--upstream-port', String(env.upstreamPort), ...args],
    { execArgv },
  );
  return {
    route: {
      port: child.ready.port,
      caPem: opts.upstreamCa ? env.upstreamCaPem : child.ready.caPem!,
      proxy: true,
      ...(child.ready.auth ? { auth: child.ready.auth } : {}),
    },
    pid: child.pid,
    cpuMicros: () => child.cpuMicros(),
    memory: () => child.memory(),
    stop: () => child.stop(),
  };
}
