/** The environment variables the bundled `clibroker` commands read. */
export const ENV = {
  store: 'CLIBROKER_STORE',
  connection: 'CLIBROKER_CONNECTION',
  /**
   * `agent` in an agent's environment: an unknown command is answered with only the commands
   * `agent manifest` offers (presentation, not a wall: every command still runs when typed)
   */
  surface: 'CLIBROKER_SURFACE',
  /** demos and tests only: start the embedded mock vendor and route every host to it */
  mockVendor: 'CLIBROKER_MOCK_VENDOR',
} as const;

/** The environment the bundled commands read it from (process.env, or a test's). */
export type Env = Readonly<Record<string, string | undefined>>;
