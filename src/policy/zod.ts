/**
 * zod, loaded on first use. Importing clibroker (or any of its subpaths) must not pay for
 * loading zod (~60–100 ms) when nothing validates; the schemas are built on the first call
 * that needs them. zod is loaded through `require` (its CommonJS build) so that the
 * validating functions can stay synchronous, and every schema of the package uses this one
 * instance.
 */
import { createRequire } from 'node:module';

type Zod = typeof import('zod');

let loaded: Zod | undefined;

/** The zod module, loaded the first time it is asked for. */
export function zod(): Zod {
  loaded ??= createRequire(import.meta.url)('zod') as Zod;
  return loaded;
}

/** A value built on first call and kept: `const schemas = once(() => build(zod()))`. */
export function once<T>(build: () => T): () => T {
  let value: { v: T } | undefined;
  return () => {
    value ??= { v: build() };
    return value.v;
  };
}
