/** A minimal node:http MITM (bench/servers/node-mitm.ts): the floor for interception in node. */
import { startNodeChild } from './node-child.js';
import type { PathAdapter } from './types.js';

export const nodeMitm: PathAdapter = {
  name: 'node-mitm',
  role: 'floor',
  skipReason: async () => undefined,
  start: (env) =>
    startNodeChild(env, 'node-mitm', ['--upstream-ca', env.upstreamCaFile], { upstreamCa: false }),
};
