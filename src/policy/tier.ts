/**
 * The call's effective tier: the lowest of the organization ceiling, the
 * assignment's allow and the requested cliTier; linked identities and token credentials
 * are always read. Resolved once per call; the reason is recorded as `cliTierReason`.
 */
import type { Tier } from './types.js';

/** How the connection authenticates. */
export type CredentialKind =
  | 'oauth-client-credentials'
  | 'oauth-access-token'
  | 'api-key'
  | 'bot-token'
  | 'basic'
  | 'github-app';

const CREDENTIAL_KINDS: readonly CredentialKind[] = [
  'oauth-client-credentials',
  'oauth-access-token',
  'api-key',
  'bot-token',
  'basic',
  'github-app',
];

/**
 * The OAuth kinds: the only credentials a call may write with. A GitHub App installation
 * token is one: minted per call, for the call's tier.
 */
const OAUTH_KINDS: ReadonlySet<string> = new Set<CredentialKind>([
  'oauth-client-credentials',
  'oauth-access-token',
  'github-app',
]);

/**
 * The token-credential rule, written once: every kind but OAuth is a token credential and
 * only ever reads. An unknown kind counts as one, so a kind added later starts read-only.
 */
export function isTokenCredentialKind(kind: string | undefined): boolean {
  return kind === undefined || !OAUTH_KINDS.has(kind);
}

/** API key, bot token and basic are token credentials: read-only. */
export const TOKEN_CREDENTIAL_KINDS: ReadonlySet<CredentialKind> = new Set(
  CREDENTIAL_KINDS.filter(isTokenCredentialKind),
);

/**
 * Who chose the requested tier, so a refusal can say who could change it. The agent never
 * does: an argument cannot move the tier.
 * - `caller`: the platform that made the call (an in-process host's cliTier, the executor's request)
 * - `daemon.cliTier`: the daemon listener the call came through, from the operator's configuration
 * - `serve.cliTier`: the server's tier for MCP calls, from the operator's configuration
 * - `serve.executorMaxTier`: the executor asked for write and the operator's cap lowered it
 */
export type TierSource = 'caller' | 'daemon.cliTier' | 'serve.cliTier' | 'serve.executorMaxTier';

/** Every {@link TierSource}, for checking a value that crossed a boundary. */
export const TIER_SOURCES: readonly TierSource[] = [
  'caller',
  'daemon.cliTier',
  'serve.cliTier',
  'serve.executorMaxTier',
];

/** What `resolveTier` takes: the tier asked for and what caps it. */
export interface TierInput {
  /** the call's cliTier; read when absent */
  requested?: Tier;
  /** who chose `requested`; `caller` when absent */
  requestedBy?: TierSource;
  /** the organization's ceiling */
  organizationCeiling: Tier;
  /** the assignment's allow: the block author's "Allow writes" switch on → write */
  assignmentAllow: Tier;
  /** whose identity the connection acts as: an assigned (application/service) one or a person's linked one */
  identity: 'assigned' | 'linked';
  /** undefined for a kind the caller does not know: a token credential (read) */
  credentialKind: CredentialKind | undefined;
}

/**
 * Stable `cliTierReason` values, in the order they are checked (docs/policy.md):
 * the first rule that lowers a requested write names the reason.
 */
export type TierReason =
  | 'requested-default'
  | 'requested'
  | 'linked-identity'
  | 'token-credential'
  | 'organization-ceiling'
  | 'assignment-read'
  /** the executor asked for write and `serve.executorMaxTier` lowered it to read */
  | 'executor-max-tier';

/** The tier a call gets and the reason. */
export interface TierResolution {
  tier: Tier;
  reason: TierReason;
}

/** Resolve the effective tier and why. Pure; unknown credential kinds count as token credentials (read). */
export function resolveTier(input: TierInput): TierResolution {
  if (input.requested === undefined || input.requested === 'read') {
    if (input.requestedBy === 'serve.executorMaxTier') return { tier: 'read', reason: 'executor-max-tier' };
    return { tier: 'read', reason: input.requested === undefined ? 'requested-default' : 'requested' };
  }
  if (input.identity !== 'assigned') return { tier: 'read', reason: 'linked-identity' };
  if (isTokenCredentialKind(input.credentialKind)) return { tier: 'read', reason: 'token-credential' };
  if (input.organizationCeiling !== 'write') return { tier: 'read', reason: 'organization-ceiling' };
  if (input.assignmentAllow !== 'write') return { tier: 'read', reason: 'assignment-read' };
  return { tier: 'write', reason: 'requested' };
}
