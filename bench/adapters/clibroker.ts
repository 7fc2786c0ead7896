/**
 * clibroker: createBroker + openSession in its own process (bench/servers/clibroker.ts), and the
 * same child bundled from another checkout (`--base <dir>`), to compare two builds in one run.
 */
import { startNodeChild } from './node-child.js';
import type { PathAdapter } from './types.js';

/** clibroker as bundled from `script` (a bench child's path), or from this checkout. */
export function clibrokerBuild(name: string, script?: string): PathAdapter {
  return {
    name,
    role: 'subject',
    skipReason: async () => undefined,
    start: (env) =>
      startNodeChild(
        script ? { ...env, script: () => script } : env,
        'clibroker',
        ['--upstream-ca', env.upstreamCaFile, '--hosts', env.hostsFile],
        { profile: true, upstreamCa: false },
      ),
  };
}

export const clibroker: PathAdapter = clibrokerBuild('clibroker');
