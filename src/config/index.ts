/** The operator configuration: loading, pinned executables, manifest hashes. */
export type {
  AuditOtlpConfig,
  ConfigProblem,
  ConfiguredTool,
  ConnectionConfig,
  DaemonConfig,
  ExtensionInstall,
  ImageConfig,
  InstalledExtension,
  LoadedConfig,
  OperatorConfig,
  PinnedImage,
  SecretRef,
  ServeConfig,
  ServeTokens,
  UpstreamConfig,
  WithheldTool,
} from './types.js';
export { DEFAULT_DEADLINE_SECONDS, type LoadOptions, loadConfig } from './load.js';
export { canonicalManifestJson, manifestSha256 } from './canonical.js';
export { type FileIdentity, type PinnedExecutable, hashFile, pinExecutable } from './pin.js';
export { configJsonSchema } from './json-schema.js';
