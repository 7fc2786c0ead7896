/** The baseline: the client speaks TLS straight to the upstream. */
import type { PathAdapter } from './types.js';

export const direct: PathAdapter = {
  name: 'direct',
  role: 'baseline',
  skipReason: async () => undefined,
  start: async (env) => ({
    route: { port: env.upstreamPort, caPem: env.upstreamCaPem, proxy: false },
    stop: async () => {},
  }),
};
