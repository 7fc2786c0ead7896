/**
 * The classify phase (DESIGN §4): method table, GraphQL, then overrides. Pure; never throws.
 */
import { classifyGraphqlGet, classifyGraphqlPost, DEFAULT_GRAPHQL_LIMITS, type GraphqlVerdict } from './graphql/request.js';
import { maxClass, methodClass } from './method.js';
import { applyOverrides } from './overrides.js';
import { isGraphqlPath, looksLikeGraphqlPath, splitTarget } from './target.js';
import type { ClassifyHead, ClassifyInput, PolicyClassification, WireClass } from './types.js';

/**
 * Whether classify needs the whole request body: a POST whose last path segment is exactly
 * `graphql`. The engine then buffers at most the body cap and passes it as `body`.
 */
export function needsBody(head: ClassifyHead): boolean {
  return head.method === 'POST' && isGraphqlPath(splitTarget(head.target).path);
}

function graphqlVerdict(input: ClassifyInput, path: string, query: string | undefined): GraphqlVerdict | undefined {
  const limits = input.limits === undefined ? DEFAULT_GRAPHQL_LIMITS : { ...DEFAULT_GRAPHQL_LIMITS, ...input.limits };
  if (input.method === 'POST' && isGraphqlPath(path)) return classifyGraphqlPost(input.headers, query, input.body, limits);
  // HEAD too: frameworks (Express) route HEAD to the GET handler, which would run ?query=
  if ((input.method === 'GET' || input.method === 'HEAD') && looksLikeGraphqlPath(path)) {
    return classifyGraphqlGet(input.headers, query, limits);
  }
  return undefined;
}

/**
 * Classify one request as read, write or destructive, with a stable reason
 * (docs/policy.md). A GraphQL POST without `body` or with a body it cannot read is at
 * least write. Never throws: an unexpected failure classifies at least write.
 */
export function classify(input: ClassifyInput): PolicyClassification {
  const base = methodClass(input.method);
  try {
    const { path, query } = splitTarget(input.target);
    const g = graphqlVerdict(input, path, query);
    const out: PolicyClassification = {
      class: g?.class ?? base.class,
      reason: g?.reason ?? base.reason,
      overridesApplied: [],
      baseClass: g?.class ?? base.class,
      baseReason: g?.reason ?? base.reason,
    };
    if (g !== undefined) out.graphql = g.info;
    if (input.overrides !== undefined && input.overrides.length > 0) applyOverrides(out, input, path);
    return out;
  } catch {
    const cls: WireClass = maxClass(base.class, 'write');
    return { class: cls, reason: 'internal-error', overridesApplied: [], baseClass: cls, baseReason: 'internal-error' };
  }
}
