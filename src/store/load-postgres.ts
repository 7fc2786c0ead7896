/**
 * The PostgreSQL store's module, loaded on first use. `pg` is an optional peer dependency of
 * the library (the clibroker binary carries its own copy): a host that never opens a
 * PostgreSQL store does not install it, and one that does without it gets DEPENDENCY_MISSING
 * naming the package, not a module-resolution error.
 */
import { missingPeer } from '../errors.js';

/**
 * `./postgres.js`, importing `pg`.
 * @throws BrokerError DEPENDENCY_MISSING when `pg` is not installed
 */
export function loadPostgresStore(): Promise<typeof import('./postgres.js')> {
  return import('./postgres.js').catch((err: unknown) => {
    throw missingPeer(err, 'pg', 'A PostgreSQL store');
  });
}
