/**
 * Parameters several bundled commands share. Plain data: this module is on the cold-start
 * path (the back-ends behind these flags load only when a command runs).
 */

/** `--store <path|url>`: the store of approvals and audit events (a SQLite file or a PostgreSQL URL). */
export const storeParam = {
  type: 'string',
  optional: true,
  describe:
    'the store (approvals, audit events, tier switches): a SQLite file, or a postgres:// URL shared by several brokers; default $CLIBROKER_STORE, else ~/.clibroker/store.db',
} as const;

/** `--connection-file <path>`: the secret, from a file, never from argv. */
export const connectionFileParam = {
  type: 'string',
  optional: true,
  sensitive: true,
  describe:
    'a file holding the connection JSON (the credential, e.g. {"kind":"oauth_access_token","accessToken":"…"}); default $CLIBROKER_CONNECTION. Secrets never go in argv: there is no --connection flag, and this flag takes a path, not JSON',
} as const;

/** `--config <file>`: the operator configuration whose store an operator command opens. */
export const configParam = {
  type: 'string',
  optional: true,
  describe:
    "the operator configuration file; the command opens the store it names (instead of --store). Operators only: the configuration is never the agent's",
} as const;

/**
 * `--limit <n>`: at most this many rows of a listing. Its bound is the store's own (`MAX_LIMIT`
 * in src/store/rows.ts, checked equal by tests/store/limit.test.ts), written out here so
 * this module stays plain data on the cold-start path.
 */
export const limitParam = {
  type: 'number',
  integer: true,
  min: 1,
  max: 10_000,
  default: 100,
  describe: 'at most this many, 1..10000',
} as const;
