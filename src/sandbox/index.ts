/** The sandbox a vendor CLI runs in. */
export { runSandboxed } from './run.js';
export { isolationUnavailable } from './isolated.js';
export type { ExitStatus, SandboxOptions, SandboxProfile, SandboxResult } from './types.js';
export { SANDBOX_LIMITS, SANDBOX_PROFILES } from './types.js';
