/**
 * Loading better-sqlite3, an optional dependency (native code), on first use. Its own
 * module so that the driver's types stay out of the published declarations: no exported
 * type of the public entry reaches this file.
 */
import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';
import { BrokerError } from '../errors.js';

type Driver = typeof Database;
let driver: Driver | undefined;

/**
 * better-sqlite3, loaded on first use. It is CommonJS, so `require` loads it synchronously and
 * `openSqliteStore` stays synchronous. Absent, or present without its native part (installed
 * with scripts skipped, or built for another Node), it is STORE_DRIVER_MISSING: retrying
 * cannot help, installing can.
 *
 * @throws BrokerError STORE_DRIVER_MISSING
 */
export function loadSqliteDriver(): Driver {
  if (driver) return driver;
  try {
    driver = createRequire(import.meta.url)('better-sqlite3') as Driver;
  } catch (err) {
    throw driverMissing(
      err,
      (err as { code?: string })?.code === 'MODULE_NOT_FOUND' ? 'absent' : 'not built',
    );
  }
  return driver;
}

/** How the driver fails its first connection when its compiled addon is missing or for another Node. */
export const NATIVE_MISSING =
  /Could not locate the bindings file|NODE_MODULE_VERSION|invalid ELF header|wrong ELF class/;

export function driverMissing(err: unknown, reason: 'absent' | 'not built'): BrokerError {
  return new BrokerError('STORE_DRIVER_MISSING', {
    details: { driver: 'better-sqlite3', reason },
    cause: err,
  });
}
