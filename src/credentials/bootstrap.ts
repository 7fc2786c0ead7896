/**
 * The sign-in bootstrap. A CLI like az insists on logging in with a client
 * secret before it calls the API. The child gets a placeholder secret; its request to the
 * credential's token URL is answered here with a placeholder token and never forwarded;
 * the real token is stamped on the API hosts later. Discovery and metadata requests to the
 * sign-in host pass through without credentials; anything else there is refused.
 */
import { randomBytes } from 'node:crypto';
import type { RefusalShape, RequestHead, SyntheticResponse } from '../broker/types.js';
import { errorMessage } from '../errors.js';
import type { BootstrapPlan } from './binding.js';

/** What the child's token request gets back (az 2.45 accepts an opaque token). */
export const PLACEHOLDER_EXPIRES_IN = 3599;

/** A fresh opaque placeholder access token; 24 hex chars stay below the redactor's 32-char runs. */
export function placeholderAccessToken(): string {
  return `clibroker-placeholder-${randomBytes(12).toString('hex')}`;
}

// MSAL's authority discovery (`/<tenant>/v2.0/.well-known/openid-configuration`), AAD instance
// discovery (`/common/discovery/instance`) and the signing keys they point at.
const DISCOVERY_RES: readonly RegExp[] = [
  /^(?:\/[^/]+)*\/\.well-known\/openid-configuration$/,
  /^(?:\/[^/]+)*\/\.well-known\/oauth-authorization-server$/,
  /^\/[^/]+\/discovery\/instance$/,
  /^\/[^/]+\/discovery(?:\/v2\.0)?\/keys$/,
];

function pathOf(target: string): string {
  const q = target.indexOf('?');
  return q === -1 ? target : target.slice(0, q);
}

/** True for a sign-in host metadata request that may pass through unauthenticated. */
export function isDiscoveryRequest(head: RequestHead): boolean {
  if (head.method !== 'GET' && head.method !== 'HEAD') return false;
  const path = pathOf(head.target);
  // Dot-segments and encoded slashes could dress another endpoint up as discovery.
  if (/(?:^|\/)\.\.?(?:\/|$)|%2f|%5c|\\/i.test(path)) return false;
  return DISCOVERY_RES.some((re) => re.test(path));
}

/**
 * The refusal shape at a connection's token endpoint: a POST to it (host and path, any query)
 * is refused as OAuth JSON, the only body the CLI's sign-in library reads there; every other
 * request keeps the broker's own.
 */
export function tokenEndpointShape(tokenUrl: URL): (head: RequestHead) => RefusalShape {
  const host = tokenUrl.hostname;
  const path = tokenUrl.pathname;
  return (head) =>
    head.method === 'POST' && head.host === host && pathOf(head.target) === path ? 'oauth' : 'broker';
}

function json(status: number, body: unknown): SyntheticResponse {
  return {
    status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      pragma: 'no-cache',
    },
    body: JSON.stringify(body),
  };
}

/**
 * The bootstrap's intercept for one session: a token request → placeholder token; discovery
 * → undefined (forward without credentials); anything else on a sign-in host that is not in
 * egress → an OAuth-style JSON refusal (az crashes on a non-JSON body there).
 */
export function bootstrapIntercept(
  plan: BootstrapPlan,
  egress: ReadonlySet<string>,
  accessToken: string,
): (head: RequestHead) => SyntheticResponse | undefined {
  const tokenPath = plan.tokenUrl.pathname;
  return (head) => {
    if (head.host !== plan.signInHost) return undefined;
    if (head.method === 'POST' && pathOf(head.target) === tokenPath) {
      return json(200, {
        token_type: 'Bearer',
        access_token: accessToken,
        expires_in: PLACEHOLDER_EXPIRES_IN,
        ext_expires_in: PLACEHOLDER_EXPIRES_IN,
      });
    }
    if (isDiscoveryRequest(head) || egress.has(head.host)) return undefined;
    const reason = errorMessage('CLI_EGRESS_HOST_DENIED', {
      signInHost: plan.signInHost,
      method: head.method,
      path: pathOf(head.target).slice(0, 100),
    });
    return {
      ...json(403, { error: 'access_denied', error_description: reason }),
      refusal: { code: 'POLICY_BLOCKED', policyCode: 'CLI_EGRESS_HOST_DENIED', reason },
    };
  };
}
