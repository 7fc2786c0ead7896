/**
 * How a connection's own credential becomes an `Authorization` value: declared
 * per CLI (`authScheme`), because the same kind of token is sent differently by different
 * CLIs (gh: `token …`; most APIs: `Bearer …`).
 */
import type { AuthScheme } from '../manifest/types.js';
import type { Connection } from './types.js';

/** `Authorization` for a token under `scheme`. Basic with a bare token is `base64(token:)` (Stripe-style). */
export function formatAuthorization(scheme: AuthScheme, token: string): string {
  switch (scheme) {
    case 'token':
      return `token ${token}`;
    case 'basic':
      return `Basic ${Buffer.from(`${token}:`).toString('base64')}`;
    default:
      return `Bearer ${token}`;
  }
}

/**
 * The static `Authorization` for a token-like connection, or undefined for an application
 * identity or a GitHub App (their credential is minted). A basic connection is always `Basic user:password`:
 * there is no other way to send a password.
 */
export function staticAuthorization(c: Connection, scheme: AuthScheme = 'bearer'): string | undefined {
  switch (c.kind) {
    case 'basic':
      return `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
    case 'oauth_access_token':
      return formatAuthorization(scheme, c.accessToken);
    case 'api_key':
      return formatAuthorization(scheme, c.apiKey);
    case 'bot_token':
      return formatAuthorization(scheme, c.token);
    case 'oauth_client_credentials':
    case 'github_app':
      return undefined;
  }
}
