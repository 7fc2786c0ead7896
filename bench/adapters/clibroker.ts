/** clibroker: createBroker + openSession in its own process (bench/servers/clibroker.ts). */
import { startNodeChild } from './node-child.js';
import type { PathAdapter } from './types.js';

export const clibroker: PathAdapter = {
  name: 'clibroker',
  role: 'subject',
  skipReason: async () => undefined,
  start: (env) =>
    startNodeChild(env, 'clibroker', ['--upstream-ca', env.upstreamCaFile, '--hosts', env.hostsFile], {
      profile: true,
      upstreamCa: false,
    }),
};
