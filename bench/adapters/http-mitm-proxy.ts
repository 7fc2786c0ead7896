/** http-mitm-proxy from npm (bench/package.json); skipped when `npm install --prefix bench` was not run. */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { startNodeChild } from './node-child.js';
import type { PathAdapter } from './types.js';

export const httpMitmProxy: PathAdapter = {
  name: 'http-mitm-proxy',
  role: 'peer',
  async skipReason() {
    try {
      createRequire(import.meta.url).resolve('http-mitm-proxy');
      return undefined;
    } catch {
      return 'skipped: not installed (npm install --prefix bench)';
    }
  },
  start: (env) =>
    startNodeChild(
      env,
      'http-mitm-proxy',
      ['--upstream-ca', env.upstreamCaFile, '--ca-cache', join(env.cacheDir, 'http-mitm-proxy-ca')],
      { upstreamCa: false },
    ),
};
