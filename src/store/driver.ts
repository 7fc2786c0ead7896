/**
 * Loading better-sqlite3, an optional peer dependency (native code), on first use. Its own
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

let addonPath: string | null | undefined;

/**
 * The driver's compiled addon where a build or a prebuilt download puts it, when it is there.
 * Handed to the driver (`nativeBinding`), it spares the search its `bindings` helper makes
 * otherwise: a dozen candidate paths, each a failed require, ~3 ms of every process that
 * opens a store. Undefined when it is elsewhere (a debug build): the driver searches as
 * before. Loading it still fails the same ways, so a mismatched build is still STORE_DRIVER_MISSING.
 */
export function sqliteAddonPath(): string | undefined {
  if (addonPath === undefined) {
    try {
      addonPath = createRequire(import.meta.url).resolve('better-sqlite3/build/Release/better_sqlite3.node');
    } catch {
      addonPath = null;
    }
  }
  return addonPath ?? undefined;
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
