/** The host: an operator configuration running its `<id>_cli` tools in-process. */
export { createHost, type Host, type HostOptions, offeredTools, outcome } from './host.js';
export type { CallControl, CallOptions, ToolHost, ToolInput, ToolListing, ToolOutput } from './types.js';
