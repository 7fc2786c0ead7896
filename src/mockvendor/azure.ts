/**
 * An Azure-like vendor: the sign-in (login.microsoftonline.com) and ARM (management.azure.com)
 * calls azure-cli 2.45 makes for a service-principal login, `group list`, `group create` and `group delete`
 * (shapes as az really sends them through an intercepting proxy). The token endpoint is the real credential's:
 * it mints only for the real client secret, and ARM accepts only a token it minted — so a
 * passing az run proves the broker minted and stamped, and the child's placeholder secret
 * never got anywhere.
 */
import type { VendorHandler, VendorRequest, VendorResponse } from './server.js';

export interface AzureVendorOptions {
  tenantId: string;
  clientId: string;
  /** the real client secret the minter must present */
  clientSecret: string;
  subscriptionId: string;
}

const LOGIN = 'login.microsoftonline.com';

function openidConfiguration(tenant: string): VendorResponse {
  const base = `https://${LOGIN}/${tenant}`;
  return {
    status: 200,
    body: {
      token_endpoint: `${base}/oauth2/v2.0/token`,
      token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
      jwks_uri: `${base}/discovery/v2.0/keys`,
      response_modes_supported: ['query', 'fragment', 'form_post'],
      subject_types_supported: ['pairwise'],
      id_token_signing_alg_values_supported: ['RS256'],
      response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
      scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
      issuer: `${base}/v2.0`,
      request_uri_parameter_supported: false,
      userinfo_endpoint: 'https://graph.microsoft.com/oidc/userinfo',
      authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
      device_authorization_endpoint: `${base}/oauth2/v2.0/devicecode`,
      http_logout_supported: true,
      frontchannel_logout_supported: true,
      end_session_endpoint: `${base}/oauth2/v2.0/logout`,
      claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'nonce', 'tid'],
      tenant_region_scope: 'EU',
      cloud_instance_name: 'microsoftonline.com',
      cloud_graph_host_name: 'graph.windows.net',
      msgraph_host: 'graph.microsoft.com',
      rbac_url: 'https://pas.windows.net',
    },
  };
}

function instanceDiscovery(): VendorResponse {
  return {
    status: 200,
    body: {
      tenant_discovery_endpoint: `https://${LOGIN}/common/v2.0/.well-known/openid-configuration`,
      'api-version': '1.1',
      metadata: [
        {
          preferred_network: LOGIN,
          preferred_cache: 'login.windows.net',
          aliases: [LOGIN, 'login.windows.net', 'login.microsoft.com', 'sts.windows.net'],
        },
      ],
    },
  };
}

/** A handler for `startMockVendor` answering as Entra ID + ARM. `minted` counts tokens issued. */
export function azureVendor(opts: AzureVendorOptions): VendorHandler & { readonly minted: string[] } {
  const minted: string[] = [];
  const sub = opts.subscriptionId;
  const handler = (req: VendorRequest): VendorResponse => {
    if (req.host === LOGIN) {
      if (req.method === 'GET' && req.path.endsWith('/v2.0/.well-known/openid-configuration'))
        return openidConfiguration(opts.tenantId);
      if (req.method === 'GET' && req.path === '/common/discovery/instance') return instanceDiscovery();
      if (req.method === 'POST' && req.path === `/${opts.tenantId}/oauth2/v2.0/token`) {
        const form = new URLSearchParams(req.body.toString('utf8'));
        if (form.get('client_id') !== opts.clientId || form.get('client_secret') !== opts.clientSecret) {
          return {
            status: 401,
            body: {
              error: 'invalid_client',
              error_description: 'AADSTS7000215: Invalid client secret provided.',
            },
          };
        }
        const token = `arm-token-${minted.length + 1}-${(form.get('scope') ?? '').replace(/[^a-z.]/gi, '')}`;
        minted.push(token);
        return {
          status: 200,
          body: { token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: token },
        };
      }
      return {
        status: 404,
        body: { error: 'not_found', error_description: `mock sign-in host: no ${req.method} ${req.path}` },
      };
    }
    if (req.host === 'management.azure.com') {
      const auth = req.headers.authorization ?? '';
      if (!minted.some((t) => auth === `Bearer ${t}` && t.includes('management.azure.com'))) {
        return {
          status: 401,
          body: { error: { code: 'InvalidAuthenticationToken', message: 'The access token is invalid.' } },
        };
      }
      const p = req.path.toLowerCase();
      if (req.method === 'GET' && p === '/subscriptions') {
        return {
          status: 200,
          body: {
            value: [
              {
                id: `/subscriptions/${sub}`,
                subscriptionId: sub,
                tenantId: opts.tenantId,
                displayName: 'Demo subscription',
                state: 'Enabled',
                subscriptionPolicies: {
                  locationPlacementId: 'Public_2014-09-01',
                  quotaId: 'PayAsYouGo_2014-09-01',
                  spendingLimit: 'Off',
                },
                authorizationSource: 'RoleBased',
              },
            ],
          },
        };
      }
      if (req.method === 'GET' && p === `/subscriptions/${sub}/resourcegroups`) {
        return {
          status: 200,
          body: {
            value: [
              {
                id: `/subscriptions/${sub}/resourceGroups/rg1`,
                name: 'rg1',
                type: 'Microsoft.Resources/resourceGroups',
                location: 'westeurope',
                properties: { provisioningState: 'Succeeded' },
              },
            ],
          },
        };
      }
      const rg = new RegExp(`^/subscriptions/${sub}/resourcegroups/([^/]+)$`).exec(p);
      if (rg && req.method === 'PUT') {
        let location = 'westeurope';
        try {
          location = String(JSON.parse(req.body.toString('utf8')).location ?? location);
        } catch {
          return {
            status: 400,
            body: { error: { code: 'InvalidRequestContent', message: 'The request content was invalid.' } },
          };
        }
        return {
          status: 201,
          body: {
            id: `/subscriptions/${sub}/resourceGroups/${rg[1]}`,
            name: rg[1],
            type: 'Microsoft.Resources/resourceGroups',
            location,
            properties: { provisioningState: 'Succeeded' },
          },
        };
      }
      if (rg && req.method === 'DELETE') {
        return {
          status: 202,
          headers: {
            location: `https://management.azure.com/subscriptions/${sub}/operationresults/op1?api-version=2022-09-01`,
            'retry-after': '15',
          },
        };
      }
      return {
        status: 404,
        body: { error: { code: 'NotFound', message: `mock ARM: no ${req.method} ${req.path}` } },
      };
    }
    return { status: 404, body: { message: `mock azure vendor: unknown host ${req.host}` } };
  };
  return Object.assign(handler, { minted });
}
