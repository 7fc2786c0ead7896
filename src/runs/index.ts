/** Governed runs of vendor CLIs: the runner, its gate and result types. */
export { createRunner, type Runner, type RunnerOptions } from './runner.js';
export type { PendingRequest } from './gate.js';
export type {
  ChildOutput,
  ConnectionSource,
  RefusedRequest,
  RunBase,
  RunImage,
  RunInput,
  RunResult,
  SentRequest,
} from './types.js';
