/**
 * Binding: which credential, if any, goes on a request to host H, decided once
 * when a call is prepared, before any process starts. Pure: no I/O, throws catalogue codes.
 *
 *   credentialHosts hosts-only entry  → the connection's own credential on those hosts
 *   credentialHosts hosts+scopes      → a token minted for the scopes, on those hosts
 *   no credentialHosts                → the extension's single egress host
 *
 * An organization endpoint (GHE's host, say) replaces the public host: with one configured,
 * the connection's own credential goes on the endpoint only — both without credentialHosts
 * and in place of every hosts-only entry. The public hosts stay reachable, unauthenticated.
 * An organization's credential is for its own server; stamping it on the public default
 * would hand it to a vendor host that is not the organization's. Entries with scopes keep
 * their hosts: a minted token is made for those hosts.
 */
import { BrokerError, brokerError } from '../errors.js';
import { isExactDnsName, isScopeToken } from '../manifest/rules-hosts.js';
import { redactSecrets } from '../audit/secret-shape.js';
import type { CliManifest, CredentialHostsEntry, ExtensionManifest } from '../manifest/types.js';
import { type Connection, isApplicationIdentity, isSecureTokenUrl, parseStrictHttpsUrl } from './types.js';

/** One bound host set and what is stamped on it. */
export type Binding =
  | { hosts: readonly string[]; credential: 'connection' }
  | { hosts: readonly string[]; credential: 'minted'; scopes: readonly string[] };

/** The sign-in bootstrap, when the CLI declares one. */
export interface BootstrapPlan {
  tokenUrl: URL;
  /** the token URL's host: discovery passes through it unauthenticated */
  signInHost: string;
}

/** Everything decided at prepare time. Holds no secret. */
export interface CredentialPlan {
  cli: CliManifest;
  bindings: readonly Binding[];
  /** hosts the child may reach: the extension's egress plus the organization endpoint's host */
  egress: readonly string[];
  endpointHost?: string;
  bootstrap?: BootstrapPlan;
}

export interface PlanInput {
  extension: ExtensionManifest;
  cliId: string;
  connection: Connection;
  /** the organization's configured endpoint (GHE: `https://ghe.example.com` or the bare host) */
  endpoint?: string;
}

/**
 * Decide the bindings for one call.
 * @throws BrokerError TOOL_VENDOR_CLI_NOT_DECLARED, IDENTITY_NOT_CONFIGURED,
 *   TOOL_VENDOR_CLI_CREDENTIAL_HOSTS_REQUIRED, TOOL_VENDOR_CLI_CREDENTIAL_UNBOUND, INVALID_TOOL_INPUT,
 *   MANIFEST_INVALID (an unvalidated manifest with `scopes: []`)
 */
export function planCredentials(input: PlanInput): CredentialPlan {
  const { extension, cliId, connection } = input;
  const cli = extension.clis.find((c) => c.id === cliId);
  if (!cli) {
    throw new BrokerError('TOOL_VENDOR_CLI_NOT_DECLARED', {
      details: { cliId: cliId.slice(0, 64), declared: extension.clis.map((c) => c.id) },
    });
  }
  const endpointHost = input.endpoint === undefined ? undefined : parseEndpoint(input.endpoint);
  const egress = [...new Set([...extension.egress, ...(endpointHost ? [endpointHost] : [])])];
  const entries = cli.credentialHosts ?? [];

  refuseUnreadableScopes(extension, cli, connection);
  if (isApplicationIdentity(connection) && !isSecureTokenUrl(connection.tokenUrl)) {
    throw brokerError(
      'INVALID_TOOL_INPUT',
      {
        reason:
          'connection.tokenUrl must be an https:// URL without a user name or password: the client secret is sent there.',
      },
      { details: { field: 'connection.tokenUrl' } },
    );
  }
  const scoped = entries.filter(hasScopes);
  if ((scoped.length > 0 || cli.bootstrap) && !isApplicationIdentity(connection)) {
    throw new BrokerError('IDENTITY_NOT_CONFIGURED', {
      details: { cliId, connectionKind: connection.kind, needs: scoped.length > 0 ? 'scopes' : 'bootstrap' },
    });
  }

  let bindings: Binding[];
  if (entries.length > 0) {
    // A host a scoped entry binds keeps its minted token even when it is the endpoint.
    const mintedHosts = new Set(scoped.flatMap((e) => e.hosts));
    let endpointBound = endpointHost !== undefined && mintedHosts.has(endpointHost);
    bindings = [];
    for (const e of entries) {
      if (hasScopes(e)) bindings.push({ hosts: [...e.hosts], credential: 'minted', scopes: [...e.scopes] });
      else if (endpointHost === undefined) bindings.push({ hosts: [...e.hosts], credential: 'connection' });
      else if (!endpointBound) {
        // the endpoint replaces the hosts of every hosts-only entry
        bindings.push({ hosts: [endpointHost], credential: 'connection' });
        endpointBound = true;
      }
    }
  } else if (endpointHost) {
    bindings = [{ hosts: [endpointHost], credential: 'connection' }];
  } else if (extension.egress.length > 1) {
    throw new BrokerError('TOOL_VENDOR_CLI_CREDENTIAL_HOSTS_REQUIRED', {
      details: { cliId, egress: extension.egress },
    });
  } else {
    bindings =
      extension.egress.length === 1 ? [{ hosts: [extension.egress[0]!], credential: 'connection' }] : [];
  }
  // Defence in depth: a manifest is validated, but a plan may be built from an unvalidated
  // object; a credential must never bind to a host the child cannot reach legitimately.
  const reachable = new Set(egress);
  bindings = bindings
    .map((b) => ({ ...b, hosts: b.hosts.filter((h) => reachable.has(h)) }))
    .filter((b) => b.hosts.length > 0);
  if (bindings.length === 0) {
    throw new BrokerError('TOOL_VENDOR_CLI_CREDENTIAL_UNBOUND', { details: { cliId, egress } });
  }

  const plan: CredentialPlan = { cli, bindings, egress };
  if (endpointHost) plan.endpointHost = endpointHost;
  if (cli.bootstrap && isApplicationIdentity(connection)) {
    const tokenUrl = parseTokenUrl(connection.tokenUrl);
    plan.bootstrap = { tokenUrl, signInHost: tokenUrl.hostname };
  }
  return plan;
}

/**
 * An empty scope list is never read as anything (nor is a scope that is not one scope token).
 * In a manifest it is refused when the manifest is defined, and checked again here for plans
 * built from an unvalidated object; on the connection it is refused when the call is
 * prepared. Omit the field instead.
 */
function refuseUnreadableScopes(
  extension: ExtensionManifest,
  cli: CliManifest,
  connection: Connection,
): void {
  const j = (cli.credentialHosts ?? []).findIndex((e) => Array.isArray(e.scopes) && e.scopes.length === 0);
  if (j !== -1) {
    const path = `clis[${extension.clis.indexOf(cli)}].credentialHosts[${j}].scopes`;
    const problem = {
      code: 'MANIFEST_CREDENTIAL_HOSTS_SCOPES_EMPTY',
      path,
      value: '[]',
      expected: "1 to 8 scopes, or no scopes field for the connection's own credential",
    } as const;
    throw brokerError(
      'MANIFEST_INVALID',
      { what: 'the manifest', problems: [problem] },
      { details: { problems: [problem] } },
    );
  }
  if (!isApplicationIdentity(connection) || connection.scopes === undefined) return;
  if (
    !Array.isArray(connection.scopes) ||
    connection.scopes.length === 0 ||
    !connection.scopes.every((sc) => typeof sc === 'string' && isScopeToken(sc))
  ) {
    throw brokerError(
      'INVALID_TOOL_INPUT',
      {
        reason:
          'connection.scopes must list at least one OAuth scope token (no spaces, quotes or backslashes), or be left out to mint with no scope parameter.',
      },
      { details: { field: 'connection.scopes' } },
    );
  }
}

function hasScopes(e: CredentialHostsEntry): e is CredentialHostsEntry & { scopes: string[] } {
  return e.scopes !== undefined && e.scopes.length > 0;
}

/** The organization endpoint's host: a bare DNS name or an https URL on port 443. */
function parseEndpoint(endpoint: string): string {
  let host = endpoint;
  if (endpoint.includes(':')) {
    // strict: the host written is the host read, by every parser (parseStrictHttpsUrl)
    const u = parseStrictHttpsUrl(endpoint);
    host = u && u.port === '' ? u.hostname : '';
  }
  if (!isExactDnsName(host)) {
    throw brokerError(
      'INVALID_TOOL_INPUT',
      {
        reason:
          'the organization endpoint must be a lower-case DNS name or an https:// URL on port 443 whose host is written plainly (no user name, backslash, percent-escape or whitespace).',
      },
      { details: { field: 'endpoint', got: redactSecrets(endpoint.slice(0, 100)) } },
    );
  }
  return host;
}

/** The token URL the bootstrap answers for: https, port 443 (the only port tunnelled), a DNS host. */
function parseTokenUrl(url: string): URL {
  const u = parseStrictHttpsUrl(url);
  if (u?.port !== '' || !isExactDnsName(u.hostname)) {
    throw brokerError(
      'INVALID_TOOL_INPUT',
      {
        reason:
          'connection.tokenUrl must be an https:// URL on port 443 with a DNS host for the sign-in bootstrap.',
      },
      { details: { field: 'connection.tokenUrl' } },
    );
  }
  return u;
}
