/**
 * A configured connection and the `Connection` the credentials code takes: which fields are
 * secret references, and the connection with those read (or, for planning, placeholders).
 */
import type { Connection } from '../credentials/types.js';
import { type ResolvedSecretRef, resolveRef } from './secrets.js';
import type { ConnectionConfig } from './types.js';

/** The secret fields of a connection, with their names. */
export function secretFields(c: ConnectionConfig): [string, ResolvedSecretRef][] {
  switch (c.kind) {
    case 'oauth_access_token':
      return [['accessToken', c.accessToken]];
    case 'api_key':
      return [['apiKey', c.apiKey]];
    case 'bot_token':
      return [['token', c.token]];
    case 'basic':
      return [['password', c.password]];
    case 'oauth_client_credentials':
      return [['clientSecret', c.clientSecret]];
    case 'github_app':
      return [['privateKey', c.privateKey]];
  }
}

export function withSecrets(c: ConnectionConfig, secret: (field: string) => string): Connection {
  switch (c.kind) {
    case 'oauth_access_token':
      return { kind: c.kind, accessToken: secret('accessToken') };
    case 'api_key':
      return { kind: c.kind, apiKey: secret('apiKey') };
    case 'bot_token':
      return { kind: c.kind, token: secret('token') };
    case 'basic':
      return { kind: c.kind, username: c.username, password: secret('password') };
    case 'oauth_client_credentials': {
      const { kind, clientId, tenantId, tokenUrl, scopes } = c;
      return {
        kind,
        clientId,
        tokenUrl,
        clientSecret: secret('clientSecret'),
        ...(tenantId === undefined ? {} : { tenantId }),
        ...(scopes === undefined ? {} : { scopes: [...scopes] }),
      };
    }
    case 'github_app': {
      const { kind, appId, installationId, permissions, repositories } = c;
      return {
        kind,
        appId,
        installationId,
        privateKey: secret('privateKey'),
        ...(permissions === undefined
          ? {}
          : {
              permissions: {
                ...(permissions.read ? { read: { ...permissions.read } } : {}),
                ...(permissions.write ? { write: { ...permissions.write } } : {}),
              },
            }),
        ...(repositories === undefined ? {} : { repositories: [...repositories] }),
      };
    }
  }
}

/** The same connection with its secret files' paths made absolute. */
export function resolveConnection(c: ConnectionConfig, abs: (p: string) => string): ConnectionConfig {
  const out = { ...c } as Record<string, unknown>;
  for (const [field, ref] of secretFields(c)) out[field] = resolveRef(ref, abs);
  return out as unknown as ConnectionConfig;
}
