/** A node relay that terminates TLS on both legs and parses nothing (bench/servers/node-relay.ts): node's floor. */
import { startNodeChild } from './node-child.js';
import type { PathAdapter } from './types.js';

export const nodeRelay: PathAdapter = {
  name: 'node-relay',
  role: 'floor',
  skipReason: async () => undefined,
  start: (env) =>
    startNodeChild(env, 'node-relay', ['--upstream-ca', env.upstreamCaFile], { upstreamCa: false }),
};
