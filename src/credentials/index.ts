/** Credentials: connections, binding, stamping, minting, bootstrap, the child's env. */
export type {
  ApiKeyConnection,
  BasicConnection,
  BotTokenConnection,
  Connection,
  ConnectionKind,
  GithubAppConnection,
  GithubPermissionLevel,
  GithubPermissions,
  OAuthAccessTokenConnection,
  OAuthClientCredentialsConnection,
} from './types.js';
export { connectionSecrets, credentialKind, isApplicationIdentity, isTokenCredential } from './types.js';
export type { Binding, BootstrapPlan, CredentialPlan, PlanInput } from './binding.js';
export { planCredentials } from './binding.js';
export { formatAuthorization, staticAuthorization } from './scheme.js';
export type { MintedToken, TokenMinterOptions } from './mint.js';
export { TokenMinter, scopeKey } from './mint.js';
export type { InstallationGrant } from './github-app.js';
export { GITHUB_APP_DEFAULT_PERMISSIONS, InstallationTokens, appJwt } from './github-app.js';
export {
  PLACEHOLDER_EXPIRES_IN,
  bootstrapIntercept,
  isDiscoveryRequest,
  placeholderAccessToken,
} from './bootstrap.js';
export { PLACEHOLDER_SECRET, substitutePreamble } from './preamble.js';
export type { PrepareCredentialsInput, PreparedCredentials } from './stamper.js';
export { createCredentialStamper, prepareCredentials } from './stamper.js';
export type { ChildEnvInput } from './child-env.js';
export { MINIMAL_PATH, PLACEHOLDER_TOKEN, QUIET_DOWNS, buildChildEnv } from './child-env.js';
export type { SecretKind } from '../audit/secret-shape.js';
export {
  REDACTED,
  looksLikeSecret,
  maskKnownSecrets,
  redactSecrets,
  secretKind,
  shannonEntropy,
} from '../audit/secret-shape.js';
