/**
 * A GitHub-like vendor: the REST and GraphQL calls gh 2.23 makes for `api user`, `issue
 * list`, `issue create`, `repo delete` and star mutations (shapes as gh
 * really sends them through an intercepting proxy). It checks the real credential arrived — a placeholder or a
 * missing token gets GitHub's own 401 — so a test that passes proves the stamping worked.
 * In app mode it is also a GitHub App's installation: it verifies the app's JWT, mints
 * installation tokens with the permissions asked for, and refuses a route a token's
 * permissions do not cover, as GitHub does.
 */
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import type { VendorHandler, VendorRequest, VendorResponse } from './server.js';

export interface GithubVendorOptions {
  /** the token(s) the broker must stamp (`authorization: token <it>` or `Bearer <it>`); each may do anything */
  token?: string | readonly string[];
  /** a GitHub App installed on the vendor: installation tokens, with their permissions enforced */
  app?: GithubVendorApp;
}

/** Permission name → `read`, `write` or `admin`, as GitHub writes them. */
export type GithubVendorPermissions = Record<string, 'read' | 'write' | 'admin'>;

/** An installation token the app mode minted, as a test may inspect it. */
export interface GithubVendorInstallationToken {
  token: string;
  permissions: GithubVendorPermissions;
  repositories?: string[];
  expiresAt: string;
}

/**
 * The app mode: `POST /app/installations/{id}/access_tokens` takes the app's JWT (RS256,
 * verified against `publicKey`) and returns a token holding the permissions asked for; the
 * routes then answer a token without the permission they need with GitHub's 403, "Resource
 * not accessible by integration".
 */
export interface GithubVendorApp {
  appId: string;
  installationId: string;
  /** the app's public key (PEM): the JWT must verify against it */
  publicKey: string;
  /** what the installation was granted; asking for more → 422 (default: every permission, admin) */
  granted?: GithubVendorPermissions;
  /** called with every installation token minted (tests) */
  onToken?: (minted: GithubVendorInstallationToken) => void;
  /** the clock, for tests */
  now?: () => number;
}

const REPO_ID = 'R_kgDOAcmeApp';

/** The size of `GET /repos/{owner}/{repo}/tarball/{ref}`: 3.5 MiB of `x`. */
export const TARBALL_BYTES = 3.5 * 1024 * 1024;

const issueNode = {
  id: 'I_kwDOAcme12',
  number: 12,
  title: 'Crash on start',
  url: 'https://github.com/acme/app/issues/12',
  state: 'OPEN',
  stateReason: null,
  body: 'It crashes.',
  createdAt: '2024-05-01T10:00:00Z',
  updatedAt: '2024-05-01T10:00:00Z',
  closedAt: null,
  isPinned: false,
  author: { login: 'octocat' },
  assignees: { nodes: [], totalCount: 0 },
  labels: { nodes: [{ id: 'LA_1', name: 'bug', description: '', color: 'd73a4a' }], totalCount: 1 },
  comments: { totalCount: 0 },
};

function graphqlDocument(req: VendorRequest): string | undefined {
  try {
    const parsed =
      req.method === 'GET' ? { query: req.query.get('query') ?? '' } : JSON.parse(req.body.toString('utf8'));
    return String((Array.isArray(parsed) ? parsed[0] : parsed)?.query ?? '');
  } catch {
    return undefined;
  }
}

function graphql(req: VendorRequest): VendorResponse {
  const doc = graphqlDocument(req);
  if (doc === undefined) return { status: 400, body: { message: 'Problems parsing JSON' } };
  if (/\bIssueList\b/.test(doc)) {
    return {
      status: 200,
      body: {
        data: {
          repository: {
            hasIssuesEnabled: true,
            issues: {
              totalCount: 1,
              nodes: [issueNode],
              pageInfo: { hasNextPage: false, endCursor: 'Y3Vyc29yOjE=' },
            },
          },
        },
      },
    };
  }
  if (/\bRepositoryInfo\b/.test(doc)) {
    return {
      status: 200,
      body: {
        data: {
          repository: {
            id: REPO_ID,
            name: 'app',
            owner: { login: 'acme' },
            hasIssuesEnabled: true,
            description: '',
            hasWikiEnabled: true,
            viewerPermission: 'ADMIN',
            defaultBranchRef: { name: 'main' },
            isPrivate: false,
          },
        },
      },
    };
  }
  if (/\bcreateIssue\b/.test(doc)) {
    return {
      status: 200,
      body: {
        data: {
          createIssue: {
            issue: { id: 'I_kwDOAcme13', number: 13, url: 'https://github.com/acme/app/issues/13' },
          },
        },
      },
    };
  }
  if (/\baddStar\b/.test(doc))
    return { status: 200, body: { data: { addStar: { clientMutationId: null } } } };
  if (/\bviewer\b/.test(doc)) return { status: 200, body: { data: { viewer: { login: 'octocat' } } } };
  return {
    status: 200,
    body: {
      data: null,
      errors: [{ type: 'NOT_FOUND', message: 'the mock vendor does not know this document' }],
    },
  };
}

const BAD_CREDENTIALS: VendorResponse = {
  status: 401,
  body: { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' },
};

const NOT_ACCESSIBLE = 'Resource not accessible by integration';
const LEVEL_RANK: Readonly<Record<string, number>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, number>, { read: 1, write: 2, admin: 3 }),
);

/** The permission a route needs of an installation token; undefined for one no app may call. */
function needs(req: VendorRequest, p: string): [string, 'read' | 'write' | 'admin'] | undefined {
  const read = req.method === 'GET' || req.method === 'HEAD';
  if (p === '/graphql' || p === '/api/graphql') {
    const doc = graphqlDocument(req) ?? '';
    if (/\bcreateIssue\b/.test(doc)) return ['issues', 'write'];
    if (/\baddStar\b/.test(doc)) return undefined; // starring is a user's act
    if (/\bIssueList\b/.test(doc)) return ['issues', 'read'];
    return ['metadata', 'read'];
  }
  if (/^\/repos\/[^/]+\/[^/]+$/.test(p)) return read ? ['metadata', 'read'] : ['administration', 'write'];
  if (/^\/repos\/[^/]+\/[^/]+\/tarball\//.test(p)) return ['contents', 'read'];
  if (/^\/repos\/[^/]+\/[^/]+\/issues(\/|$)/.test(p)) return ['issues', read ? 'read' : 'write'];
  return undefined; // /user and the like: a user's, not an installation's
}

/** Whether `jwt` is an RS256 JWT of `app` that verifies against its public key and is current. */
function appClaims(app: GithubVendorApp, jwt: string, nowS: number): boolean {
  const [h, c, sig] = jwt.split('.');
  if (!h || !c || !sig) return false;
  try {
    const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    const claims = JSON.parse(Buffer.from(c, 'base64url').toString('utf8'));
    if (header.alg !== 'RS256') return false;
    const ok = verify(
      'sha256',
      Buffer.from(`${h}.${c}`),
      createPublicKey(app.publicKey),
      Buffer.from(sig, 'base64url'),
    );
    // GitHub's rules: the app's id as issuer, issued no later than now, expiring within 10 minutes
    return (
      ok &&
      String(claims.iss) === app.appId &&
      typeof claims.iat === 'number' &&
      typeof claims.exp === 'number' &&
      claims.iat <= nowS + 60 &&
      claims.exp > nowS &&
      claims.exp - claims.iat <= 660 &&
      claims.exp <= nowS + 600
    );
  } catch {
    return false;
  }
}

/** The installation-token exchange of the app mode. */
function exchange(
  app: GithubVendorApp,
  req: VendorRequest,
  installation: string,
  issued: Map<string, GithubVendorInstallationToken>,
): VendorResponse {
  const now = (app.now ?? Date.now)();
  const auth = req.headers.authorization ?? '';
  const jwt = /^bearer (.+)$/i.exec(auth)?.[1];
  if (req.method !== 'POST') return { status: 404, body: { message: 'Not Found' } };
  if (!jwt || !appClaims(app, jwt, Math.floor(now / 1000)))
    return { status: 401, body: { message: 'A JSON web token could not be decoded' } };
  if (installation !== app.installationId) return { status: 404, body: { message: 'Not Found' } };
  let body: { permissions?: unknown; repositories?: unknown } = {};
  try {
    if (req.body.length > 0) body = JSON.parse(req.body.toString('utf8'));
  } catch {
    return { status: 400, body: { message: 'Problems parsing JSON' } };
  }
  const granted = app.granted;
  const asked = (body.permissions ?? granted ?? { metadata: 'read' }) as GithubVendorPermissions;
  for (const [k, v] of Object.entries(asked)) {
    if (!LEVEL_RANK[v] || (granted && (LEVEL_RANK[granted[k] ?? ''] ?? 0) < LEVEL_RANK[v]!))
      return {
        status: 422,
        body: { message: 'The permissions requested are not granted to this installation.' },
      };
  }
  const minted: GithubVendorInstallationToken = {
    token: `ghs_${randomBytes(18).toString('hex')}`,
    permissions: { metadata: 'read', ...asked },
    expiresAt: new Date(now + 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  };
  if (Array.isArray(body.repositories)) minted.repositories = body.repositories.map(String);
  issued.set(minted.token, minted);
  app.onToken?.(minted);
  return {
    status: 201,
    body: {
      token: minted.token,
      expires_at: minted.expiresAt,
      permissions: minted.permissions,
      repository_selection: minted.repositories ? 'selected' : 'all',
      ...(minted.repositories
        ? { repositories: minted.repositories.map((name) => ({ name, full_name: `acme/${name}` })) }
        : {}),
    },
  };
}

/**
 * An installation token's refusal of a route, as GitHub words it: 403 for REST, a FORBIDDEN
 * error for GraphQL; 404 for a repository the token is not narrowed to. Undefined: allowed.
 */
function refuseInstallation(
  minted: GithubVendorInstallationToken,
  req: VendorRequest,
  p: string,
): VendorResponse | undefined {
  const repo = /^\/repos\/[^/]+\/([^/]+)/.exec(p)?.[1];
  if (repo && minted.repositories && !minted.repositories.includes(repo))
    return { status: 404, body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' } };
  const need = needs(req, p);
  const have = need ? (LEVEL_RANK[minted.permissions[need[0]] ?? ''] ?? 0) : 0;
  if (need && have >= LEVEL_RANK[need[1]]!) return undefined;
  if (p === '/graphql' || p === '/api/graphql')
    return { status: 200, body: { data: null, errors: [{ type: 'FORBIDDEN', message: NOT_ACCESSIBLE }] } };
  return {
    status: 403,
    body: { message: NOT_ACCESSIBLE, documentation_url: 'https://docs.github.com/rest' },
  };
}

/**
 * A handler for `startMockVendor` that behaves like api.github.com for the calls above. With
 * `app`, it also mints installation tokens and enforces their permissions on those routes.
 */
export function githubVendor(opts: GithubVendorOptions): VendorHandler {
  const tokens = opts.token === undefined ? [] : typeof opts.token === 'string' ? [opts.token] : opts.token;
  const accepted = new Set(tokens.flatMap((t) => [`token ${t}`, `bearer ${t}`]));
  const issued = new Map<string, GithubVendorInstallationToken>();
  const now = opts.app?.now ?? Date.now;
  return (req) => {
    const p = req.path.replace(/^\/api\/v3(?=\/)/, '');
    const install = /^\/app\/installations\/([^/]+)\/access_tokens$/.exec(p);
    if (opts.app && install) return exchange(opts.app, req, install[1]!, issued);
    const auth = req.headers.authorization;
    const scheme = auth?.split(' ')[0]?.toLowerCase() ?? '';
    const presented = auth?.slice(scheme.length + 1) ?? '';
    const minted = scheme === 'token' || scheme === 'bearer' ? issued.get(presented) : undefined;
    if (minted) {
      if (Date.parse(minted.expiresAt) <= now()) return BAD_CREDENTIALS;
      const refusal = refuseInstallation(minted, req, p);
      if (refusal) return refusal;
    } else if (!auth || !accepted.has(`${scheme} ${presented}`)) return BAD_CREDENTIALS;
    if (p === '/graphql' || p === '/api/graphql') return graphql(req);
    if (req.method === 'GET' && p === '/user')
      return { status: 200, body: { login: 'octocat', id: 1, name: 'The Octocat', type: 'User' } };
    const repo = /^\/repos\/([^/]+)\/([^/]+)$/.exec(p);
    if (repo) {
      if (req.method === 'GET')
        return {
          status: 200,
          body: {
            id: 1296269,
            node_id: REPO_ID,
            name: repo[2],
            full_name: `${repo[1]}/${repo[2]}`,
            private: false,
            owner: { login: repo[1] },
          },
        };
      if (req.method === 'DELETE') return { status: 204 };
    }
    // A large download (3.5 MiB, more than a run's output cap), for output and deadline tests.
    if (req.method === 'GET' && /^\/repos\/[^/]+\/[^/]+\/tarball\/[^/]+$/.test(p))
      return {
        status: 200,
        headers: { 'content-type': 'application/x-gzip' },
        body: 'x'.repeat(TARBALL_BYTES),
      };
    const issues = /^\/repos\/([^/]+)\/([^/]+)\/issues$/.exec(p);
    if (issues && req.method === 'GET')
      return { status: 200, body: [{ number: 12, title: issueNode.title, state: 'open' }] };
    if (issues && req.method === 'POST')
      return { status: 201, body: { number: 13, html_url: 'https://github.com/acme/app/issues/13' } };
    if (req.method === 'DELETE' && /^\/repos\/[^/]+\/[^/]+\/issues\/comments\/\d+$/.test(p))
      return { status: 204 };
    return { status: 404, body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' } };
  };
}
