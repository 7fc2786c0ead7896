/**
 * Preamble placeholder substitution. The runner executes the preamble in the
 * same sandbox before the caller's command; here only `{clientId}`, `{tenantId}`, `{dummy}`
 * are filled in. No real secret can enter: `{dummy}` is a fixed placeholder.
 */
import { BrokerError } from '../errors.js';
import type { Connection } from './types.js';

/** The client secret the child sees; clibroker answers its token request, so any value works. */
export const PLACEHOLDER_SECRET = 'clibroker-placeholder-secret';

/**
 * The preamble with placeholders replaced.
 * @throws BrokerError IDENTITY_NOT_CONFIGURED when it needs an application identity, or a tenant id the connection lacks
 */
export function substitutePreamble(preamble: readonly string[], connection: Connection): string[] {
  const needsIdentity = preamble.some((a) => a.includes('{clientId}') || a.includes('{tenantId}'));
  if (needsIdentity && connection.kind !== 'oauth_client_credentials') {
    throw new BrokerError('IDENTITY_NOT_CONFIGURED', {
      details: { needs: 'bootstrap preamble', connectionKind: connection.kind },
    });
  }
  const values: Record<string, string | undefined> = { dummy: PLACEHOLDER_SECRET };
  if (connection.kind === 'oauth_client_credentials') {
    values.clientId = connection.clientId;
    values.tenantId = connection.tenantId;
  }
  return preamble.map((arg) =>
    arg.replace(/\{(clientId|tenantId|dummy)\}/g, (_m, name: string) => {
      const v = values[name];
      if (v === undefined) {
        throw new BrokerError('IDENTITY_NOT_CONFIGURED', {
          details: { needs: `{${name}} in the bootstrap preamble`, missing: name },
        });
      }
      return v;
    }),
  );
}
