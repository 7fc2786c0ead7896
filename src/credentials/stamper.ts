/**
 * The credentials phase for one call: plan the bindings, then hand the engine a
 * `CredentialStamper`. The engine removes every Authorization the child sent, then asks
 * `authorizationFor(host)`, which answers only for bound hosts.
 */
import type { CredentialStamper } from '../broker/types.js';
import { type CredentialPlan, type PlanInput, planCredentials } from './binding.js';
import { bootstrapIntercept, placeholderAccessToken, tokenEndpointShape } from './bootstrap.js';
import { TokenMinter, type TokenMinterOptions } from './mint.js';
import { substitutePreamble } from './preamble.js';
import { formatAuthorization, staticAuthorization } from './scheme.js';
import { type Connection, connectionSecrets, isApplicationIdentity, parseStrictHttpsUrl } from './types.js';
import { checkGithubApp, githubApiBase, type InstallationGrant, InstallationTokens } from './github-app.js';
import type { Tier } from '../policy/types.js';

export interface PrepareCredentialsInput extends PlanInput {
  /** options for the minter created when `minter` is not given */
  mint?: TokenMinterOptions;
  /** share one minter (and its cache) across calls of the same application identity */
  minter?: TokenMinter;
  /** the call's tier: a GitHub App connection's token is minted for it (read when left out) */
  tier?: Tier;
  /** share GitHub App installation tokens (and their cache) across calls */
  installationTokens?: InstallationTokens;
}

export interface PreparedCredentials {
  plan: CredentialPlan;
  /** for `SessionOptions.credentials` */
  stamper: CredentialStamper;
  /** for `SessionOptions.egress`: the extension's egress plus the organization endpoint's host */
  egress: readonly string[];
  /** the bootstrap preamble with placeholders substituted, when the CLI declares one */
  preamble?: string[];
  /** the minter in use (undefined for token-like connections) */
  minter?: TokenMinter;
  /** strings a log or audit redactor must never let through (the connection's secrets) */
  secrets: readonly string[];
  /** a GitHub App call: the grant of the last installation token stamped (never the token) */
  grant(): InstallationGrant | undefined;
  /** release the minter's connections when this call created it */
  close(): Promise<void>;
}

/**
 * Build the `CredentialStamper` for a plan. Exposed for hosts that plan once and open many
 * sessions; most callers want `prepareCredentials`.
 */
export function createCredentialStamper(
  plan: CredentialPlan,
  connection: Connection,
  minter?: TokenMinter,
  installation?: {
    tokens: InstallationTokens;
    tier: Tier;
    /** told the grant of every installation token stamped */
    onGrant?: (grant: InstallationGrant) => void;
  },
): CredentialStamper {
  const own = staticAuthorization(connection, plan.cli.authScheme);
  const ownScopes = isApplicationIdentity(connection) ? (connection.scopes ?? []) : [];
  const apiBase = githubApiBase(plan.endpointHost);
  const byHost = new Map<string, CredentialPlan['bindings'][number]>();
  for (const b of plan.bindings) for (const h of b.hosts) byHost.set(h, b);

  const stamper: {
    authorizationFor: CredentialStamper['authorizationFor'];
    intercept?: CredentialStamper['intercept'];
    extraHosts?: readonly string[];
    refusalShape?: CredentialStamper['refusalShape'];
  } = {
    authorizationFor(host: string) {
      const b = byHost.get(host);
      if (!b) return undefined;
      if (b.credential === 'connection' && own !== undefined) return own;
      if (b.credential === 'connection' && connection.kind === 'github_app') {
        if (!installation) return undefined;
        const { tokens, tier, onGrant } = installation;
        return tokens.token(connection, tier, apiBase).then((t) => {
          onGrant?.(t.grant);
          return formatAuthorization(plan.cli.authScheme ?? 'bearer', t.accessToken);
        });
      }
      if (!minter) return undefined; // unreachable: planCredentials requires an identity for scopes
      const scopes = b.credential === 'minted' ? b.scopes : ownScopes;
      return minter.token(scopes).then((t) => `Bearer ${t}`);
    },
  };
  // The connection's own token endpoint is the one request a refusal must answer as OAuth.
  const tokenUrl = isApplicationIdentity(connection) ? parseStrictHttpsUrl(connection.tokenUrl) : undefined;
  if (tokenUrl) stamper.refusalShape = tokenEndpointShape(tokenUrl);
  if (plan.bootstrap) {
    const egress = new Set(plan.egress);
    stamper.intercept = bootstrapIntercept(plan.bootstrap, egress, placeholderAccessToken());
    if (!egress.has(plan.bootstrap.signInHost)) stamper.extraHosts = [plan.bootstrap.signInHost];
  }
  return stamper;
}

/**
 * Prepare the credentials of one call, before any process starts.
 * @throws BrokerError TOOL_VENDOR_CLI_NOT_DECLARED, IDENTITY_NOT_CONFIGURED,
 *   TOOL_VENDOR_CLI_CREDENTIAL_HOSTS_REQUIRED, TOOL_VENDOR_CLI_CREDENTIAL_UNBOUND, INVALID_TOOL_INPUT
 */
export function prepareCredentials(input: PrepareCredentialsInput): PreparedCredentials {
  const { connection } = input;
  if (connection.kind === 'github_app') checkGithubApp(connection);
  const plan = planCredentials(input);
  const preamble = plan.cli.bootstrap
    ? substitutePreamble(plan.cli.bootstrap.preamble, connection)
    : undefined;
  let minter = input.minter;
  const ownsMinter = !minter && isApplicationIdentity(connection);
  if (!minter && isApplicationIdentity(connection)) minter = new TokenMinter(connection, input.mint);
  // A GitHub App call mints for its tier only; without a shared cache, this call's own.
  const app = connection.kind === 'github_app';
  const tokens = app ? (input.installationTokens ?? new InstallationTokens(input.mint)) : undefined;
  const ownsTokens = app && !input.installationTokens;
  let grant: InstallationGrant | undefined;
  const prepared: PreparedCredentials = {
    plan,
    stamper: createCredentialStamper(
      plan,
      connection,
      minter,
      tokens ? { tokens, tier: input.tier ?? 'read', onGrant: (g) => (grant = g) } : undefined,
    ),
    egress: plan.egress,
    secrets: connectionSecrets(connection),
    grant: () => grant,
    close: async () => {
      if (ownsMinter) await minter?.close();
      if (ownsTokens) await tokens?.close();
    },
  };
  if (preamble) prepared.preamble = preamble;
  if (minter) prepared.minter = minter;
  return prepared;
}
