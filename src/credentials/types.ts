/**
 * Connections a host platform hands in. The secret fields never leave this
 * process except in the Authorization header the stamper adds, or in the form body of a
 * token mint; they never enter the child's environment, logs, audit events or errors.
 */
import { type CredentialKind, isTokenCredentialKind } from '../policy/tier.js';

/** A user's or app's OAuth access token, used as is. */
export interface OAuthAccessTokenConnection {
  kind: 'oauth_access_token';
  accessToken: string;
}

/** A vendor API key. A token credential: read-only. */
export interface ApiKeyConnection {
  kind: 'api_key';
  apiKey: string;
}

/** A bot token (Slack-style). A token credential: read-only. */
export interface BotTokenConnection {
  kind: 'bot_token';
  token: string;
}

/** User name and password, stamped as `Basic`. A token credential: read-only. */
export interface BasicConnection {
  kind: 'basic';
  username: string;
  password: string;
}

/** An application identity: OAuth 2.0 client credentials grant. */
export interface OAuthClientCredentialsConnection {
  kind: 'oauth_client_credentials';
  clientId: string;
  clientSecret: string;
  tenantId?: string;
  /** https URL of the token endpoint; also the URL the bootstrap answers for */
  tokenUrl: string;
  /**
   * Scopes for a hosts-only credentialHosts entry (or the single bound host): the
   * connection's "own credential" is a token minted for these; the field left out → no
   * `scope` sent. An empty list is refused (INVALID_TOOL_INPUT): leave the field out.
   */
  scopes?: string[];
}

/** A GitHub App permission level, as GitHub spells it. */
export type GithubPermissionLevel = 'read' | 'write' | 'admin';

/** GitHub App permissions by name (`contents`, `issues`, `pull_requests`, …) → level. */
export type GithubPermissions = Readonly<Record<string, GithubPermissionLevel>>;

/**
 * A GitHub App installation. Each call gets an installation access token minted for the
 * call's tier: the tier's permission set (and `repositories`, when given), never more.
 * GitHub Enterprise Server: the extension's endpoint names the server, as for other kinds.
 */
export interface GithubAppConnection {
  kind: 'github_app';
  /** the app's id (or client id): the `iss` of the app's JWT */
  appId: string;
  /** the installation whose tokens the calls use */
  installationId: string;
  /** the app's private key (PEM); it signs the app's JWT and is never sent */
  privateKey: string;
  /**
   * The permission set of each tier; a tier left out takes its default
   * (`GITHUB_APP_DEFAULT_PERMISSIONS`). The read tier's set may only hold `read` levels.
   */
  permissions?: { read?: GithubPermissions; write?: GithubPermissions };
  /** repository names (without the owner) to narrow every token to; all the installation's otherwise */
  repositories?: string[];
}

/** The credential a run stamps on the vendor's hosts, one shape per kind; the secret never reaches the child. */
export type Connection =
  | OAuthAccessTokenConnection
  | ApiKeyConnection
  | BotTokenConnection
  | BasicConnection
  | OAuthClientCredentialsConnection
  | GithubAppConnection;

/**
 * The kinds of connection: `api_key`, `basic`, `bot_token`, `github_app`, `oauth_access_token`,
 * `oauth_client_credentials`.
 */
export type ConnectionKind = Connection['kind'];

/** True for an application identity, the only kind that can mint scoped tokens. */
export function isApplicationIdentity(c: Connection): c is OAuthClientCredentialsConnection {
  return c.kind === 'oauth_client_credentials';
}

const CREDENTIAL_KIND: Record<ConnectionKind, CredentialKind> = {
  oauth_client_credentials: 'oauth-client-credentials',
  oauth_access_token: 'oauth-access-token',
  api_key: 'api-key',
  bot_token: 'bot-token',
  basic: 'basic',
  github_app: 'github-app',
};

/** The tier rule's name for a connection's kind (src/policy/tier.ts); undefined for a kind not known here. */
export function credentialKind(kind: string | undefined): CredentialKind | undefined {
  return kind !== undefined && Object.hasOwn(CREDENTIAL_KIND, kind)
    ? CREDENTIAL_KIND[kind as ConnectionKind]
    : undefined;
}

/** API key, bot token and basic are token credentials: always read-only (the rule is the policy's). */
export function isTokenCredential(c: Connection): boolean {
  return isTokenCredentialKind(credentialKind(c.kind));
}

/** Every secret string a connection holds, for masking (errors, logs). */
export function connectionSecrets(c: Connection): string[] {
  switch (c.kind) {
    case 'oauth_access_token':
      return [c.accessToken];
    case 'api_key':
      return [c.apiKey];
    case 'bot_token':
      return [c.token];
    case 'basic':
      return [c.password, Buffer.from(`${c.username}:${c.password}`).toString('base64')];
    case 'oauth_client_credentials':
      return [c.clientSecret];
    case 'github_app':
      // the whole PEM, and each line of its body: a log that quotes one line leaks it too
      return [
        c.privateKey,
        ...c.privateKey
          .split(/\r?\n/)
          .map((l) => l.trim())
          .filter((l) => l.length >= 16 && !l.startsWith('-----')),
      ];
  }
}

/**
 * An https URL whose host every parser reads the same: the text between `https://` and the
 * first `/`, `?` or `#` is exactly the host the WHATWG parser found (up to case, `:443`
 * allowed). That refuses userinfo, a backslash (WHATWG reads it as `/`, RFC 3986 parsers as
 * part of the authority: `https://evil.example\@ghe.acme.example` is evil.example to one and
 * ghe.acme.example to the other), percent-escapes and tabs in the host, and spaces the
 * parser would strip. Where a credential is sent, a validator upstream of clibroker and
 * clibroker itself must agree on the host.
 */
export function parseStrictHttpsUrl(raw: string): URL | undefined {
  const authority = /^https:\/\/([^/?#]*)/i.exec(raw)?.[1]?.toLowerCase();
  if (authority === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'https:' || u.username !== '' || u.password !== '') return undefined;
  return authority === u.host || authority === `${u.hostname}:443` ? u : undefined;
}

/** The only kind of token URL a client secret is sent to: see parseStrictHttpsUrl. */
export function isSecureTokenUrl(url: string): boolean {
  return parseStrictHttpsUrl(url) !== undefined;
}
