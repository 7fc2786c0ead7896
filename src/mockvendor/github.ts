/**
 * A GitHub-like vendor: the REST and GraphQL calls gh 2.23 makes for `api user`, `issue
 * list`, `issue create`, `repo delete` and star mutations (shapes as gh
 * really sends them through an intercepting proxy). It checks the real credential arrived — a placeholder or a
 * missing token gets GitHub's own 401 — so a test that passes proves the stamping worked.
 */
import type { VendorHandler, VendorRequest, VendorResponse } from './server.js';

export interface GithubVendorOptions {
  /** the token(s) the broker must stamp (`authorization: token <it>` or `Bearer <it>`) */
  token: string | readonly string[];
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

function graphql(req: VendorRequest): VendorResponse {
  let doc = '';
  try {
    const parsed =
      req.method === 'GET' ? { query: req.query.get('query') ?? '' } : JSON.parse(req.body.toString('utf8'));
    doc = String((Array.isArray(parsed) ? parsed[0] : parsed)?.query ?? '');
  } catch {
    return { status: 400, body: { message: 'Problems parsing JSON' } };
  }
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

/** A handler for `startMockVendor` that behaves like api.github.com for the calls above. */
export function githubVendor(opts: GithubVendorOptions): VendorHandler {
  const tokens = typeof opts.token === 'string' ? [opts.token] : opts.token;
  const accepted = new Set(tokens.flatMap((t) => [`token ${t}`, `bearer ${t}`]));
  return (req) => {
    const auth = req.headers.authorization;
    const scheme = auth?.split(' ')[0]?.toLowerCase() ?? '';
    if (!auth || !accepted.has(`${scheme} ${auth.slice(scheme.length + 1)}`)) {
      return {
        status: 401,
        body: { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' },
      };
    }
    const p = req.path.replace(/^\/api\/v3(?=\/)/, '');
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
