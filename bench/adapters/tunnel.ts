/** A plain CONNECT tunnel (net pipe, no TLS termination): the floor for any proxy hop. */
import { startNodeChild } from './node-child.js';
import type { PathAdapter } from './types.js';

export const tunnel: PathAdapter = {
  name: 'connect-tunnel',
  role: 'floor',
  skipReason: async () => undefined,
  // The client's TLS goes through to the upstream, so it trusts the upstream's CA.
  start: (env) => startNodeChild(env, 'tunnel', [], { upstreamCa: true }),
};
