/**
 * The durable store: tier assignments, approvals, audit events and conformance verdicts
 * behind one `Store` interface; SQLite embedded by default, PostgreSQL for several brokers
 * sharing one database (`openStore('postgres://…')`; its module loads only then).
 */
export { applyMigrations, type Migration, MIGRATIONS, schemaVersion } from './migrations.js';
export { EXTENSION_ID_LABEL, MAX_LIMIT } from './rows.js';
export { storeAuditSink } from './sink.js';
export { type OpenStoreOptions, openStore } from './open.js';
export type { PostgresStore, PostgresStoreOptions } from './postgres.js';
export { openSqliteStore, type SqliteStoreOptions } from './sqlite.js';
export { isPostgresUrl, redactStoreUrl } from './url.js';
export * from './types.js';
