/** Governed runs of vendor CLIs: the runner, its gate and result types (DESIGN §1, §5, §7). */
export { createRunner, type Runner, type RunnerOptions } from './runner.js';
export { BODY_PREVIEW_LIMIT, type PendingRequest } from './gate.js';
export type { RefusedRequest, RunInput, RunResult } from './types.js';
