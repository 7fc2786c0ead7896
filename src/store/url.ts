/**
 * Which backend a store location names, and how to print one. A location is a SQLite path
 * (or ':memory:') unless it is a postgres:// or postgresql:// URL. URLs carry credentials,
 * so every message that names a store goes through `redactStoreUrl`.
 */

const PG_SCHEMES = /^postgres(?:ql)?:\/\//i;

/** True for postgres:// and postgresql:// locations. */
export function isPostgresUrl(location: string): boolean {
  return PG_SCHEMES.test(location);
}

/** Query parameters of a connection string that can hold a secret or a key file's contents. */
const SECRET_PARAMS = ['password', 'sslpassword', 'sslkey', 'sslcert', 'sslrootcert'];

/**
 * The location with any password removed: `postgres://user:***@host/db`. Applied to every
 * message naming a store. A URL that does not parse is shown as its scheme only, since a
 * malformed one may still hold a password where the parser does not expect it.
 */
export function redactStoreUrl(location: string): string {
  if (!isPostgresUrl(location)) return location;
  let u: URL;
  try {
    u = new URL(location);
  } catch {
    return `${location.slice(0, location.indexOf('://') + 3)}<unparsable URL, not shown>`;
  }
  if (u.password) u.password = '***';
  for (const p of SECRET_PARAMS) if (u.searchParams.has(p)) u.searchParams.set(p, '***');
  return u.toString();
}
