/** Extension manifests: types, definition and validation. */
export type {
  AuthScheme,
  CliManifest,
  CredentialHostsEntry,
  ExtensionManifest,
  HelpCommand,
  HelpTree,
  ToolkitManifest,
  WireOverride,
} from './types.js';
export { DEFAULT_CREDENTIAL } from './types.js';
export {
  MAX_CLIS,
  cliManifestProblems,
  defineCli,
  defineExtension,
  extensionProblems,
  parseExtensionManifest,
} from './define.js';
export type { ManifestProblem, ManifestReason } from './problems.js';
export { displayValue, formatPath } from './problems.js';
export { isExactDnsName } from './rules-hosts.js';
export { isPlatformOwnedEnvName } from './rules-env.js';
export { PREAMBLE_PLACEHOLDERS } from './rules-cli.js';
export { extensionJsonSchema } from './json-schema.js';
