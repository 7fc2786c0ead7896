/**
 * The durable store: tier assignments, approvals and audit events
 * behind one `Store` interface; SQLite embedded by default.
 */
export { applyMigrations, type Migration, MIGRATIONS, schemaVersion } from './migrations.js';
export { EXTENSION_ID_LABEL, MAX_LIMIT } from './rows.js';
export { storeAuditSink } from './sink.js';
export { openSqliteStore, type SqliteStoreOptions } from './sqlite.js';
export * from './types.js';
