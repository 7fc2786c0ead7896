/**
 * The classify phase: refusals no class can describe (reflecting methods, method-override
 * parameters), then the method table, GraphQL and overrides. Pure: plain data in, an answer
 * out; a refusal is a thrown BrokerError, which the engine answers with its code.
 */
import { brokerError, isBrokerError } from '../errors.js';
import {
  classifyGraphqlBody,
  classifyGraphqlPost,
  classifyGraphqlUrl,
  combineVerdicts,
  DEFAULT_GRAPHQL_LIMITS,
  type GraphqlVerdict,
  unparsedVerdict,
  urlOperationName,
} from './graphql-request.js';
import { isFormBody, refuseMethodOverride } from './method-override.js';
import { classRank, maxClass, methodClass } from './method.js';
import { applyOverrides, declaresGraphqlPath } from './overrides.js';
import { isGraphqlPath, pathPart, splitTarget } from './target.js';
import type { ClassifyHead, ClassifyInput, GraphqlLimits, PolicyClassification, WireClass } from './types.js';

/**
 * Methods whose response reflects the request (TRACE, and IIS's TRACK): the origin would
 * show the child the credential the engine stamps. Compared case-insensitively, as servers
 * that upper-case the method (Werkzeug) would.
 */
const REFLECTING: ReadonlySet<string> = new Set(['TRACE', 'TRACK']);

/** The head declares a body: a Transfer-Encoding, or a Content-Length other than 0. */
function declaresBody(headers: Readonly<Record<string, string>>): boolean {
  const cl = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (cl !== undefined && !/^\s*0+\s*$/.test(cl));
}

/**
 * Whether classify needs the whole body, if the request has one: a request of any method
 * whose path may reach a GraphQL handler, or a body servers may parse as form fields (a
 * `_method` field): urlencoded, or a POST without a Content-Type; or a path an override
 * declares a GraphQL endpoint (pass the session's overrides for that). The engine then buffers at most
 * the body cap and passes it as `body`; other bodies (JSON to a REST path, uploads) keep streaming.
 */
export function needsBody(head: ClassifyHead, overrides?: readonly unknown[]): boolean {
  const path = pathPart(head.target);
  return isGraphqlPath(path) || isFormBody(head.method, head.headers) || declaresGraphqlPath(overrides, path);
}

/**
 * The GraphQL reading of a request to a GraphQL path, or undefined when there is nothing to
 * read. A POST is read from its body (a query POST is a read). Any other method is read from
 * its query string and from its body when it has one (servers that read a GET body execute
 * it), and the higher class of the two counts.
 */
function graphqlVerdict(
  input: ClassifyInput,
  query: string | undefined,
  limits: Readonly<GraphqlLimits>,
): GraphqlVerdict | undefined {
  // with a `#` in the target, servers that drop it as a fragment and servers that keep it
  // (Go's ParseRequestURI) see different query strings
  const t = input.target;
  const split = t.includes('#') && t.includes('?');
  if (input.method === 'POST')
    return split
      ? unparsedVerdict('bad-query-string')
      : classifyGraphqlPost(input.headers, query, input.body, limits);
  let v = split ? unparsedVerdict('bad-query-string') : classifyGraphqlUrl(query, limits);
  let b: GraphqlVerdict | undefined;
  if (input.body !== undefined && input.body.length > 0) {
    const name = urlOperationName(query);
    b =
      name === null
        ? unparsedVerdict('duplicate-param')
        : classifyGraphqlBody(input.headers, input.body, name, limits);
  } else if (input.body === undefined && declaresBody(input.headers)) {
    b = unparsedVerdict('no-body');
  }
  if (b !== undefined) v = v === undefined ? b : combineVerdicts(v, b);
  return v;
}

/**
 * Classify one request as read, write or destructive, with a stable reason
 * (docs/policy.md). Throws a BrokerError for a request no class describes: TRACE and TRACK
 * (CLI_TRACE_REFUSED) and a `_method` override parameter (CLI_METHOD_OVERRIDE_REFUSED).
 * Otherwise it never throws: an unexpected failure classifies at least write.
 */
export function classify(input: ClassifyInput): PolicyClassification {
  if (REFLECTING.has(input.method.toUpperCase())) {
    throw brokerError('CLI_TRACE_REFUSED', { method: input.method.slice(0, 16) });
  }
  const base = methodClass(input.method);
  try {
    const { query } = splitTarget(input.target);
    // everything after the first `?`, a `#…` included: not every server drops a fragment
    const q = input.target.indexOf('?');
    refuseMethodOverride(
      input.method,
      q === -1 ? undefined : input.target.slice(q + 1),
      input.headers,
      input.body,
    );
    const path = pathPart(input.target);
    const limits =
      input.limits === undefined ? DEFAULT_GRAPHQL_LIMITS : { ...DEFAULT_GRAPHQL_LIMITS, ...input.limits };
    const g =
      isGraphqlPath(path) || declaresGraphqlPath(input.overrides, path)
        ? graphqlVerdict(input, query, limits)
        : undefined;
    let cls = base.class;
    let reason = base.reason;
    if (g !== undefined) {
      // a POST's class is its body's; any other method keeps at least the method table's
      cls = input.method === 'POST' ? g.class : maxClass(base.class, g.class);
      if (input.method === 'POST' || classRank(g.class) >= classRank(base.class)) reason = g.reason;
    }
    const out: PolicyClassification = {
      class: cls,
      reason,
      overridesApplied: [],
      baseClass: cls,
      baseReason: reason,
    };
    if (g !== undefined) out.graphql = g.info;
    if (input.overrides !== undefined && input.overrides.length > 0) applyOverrides(out, input, path);
    return out;
  } catch (e) {
    if (isBrokerError(e)) throw e;
    const cls: WireClass = maxClass(base.class, 'write');
    return {
      class: cls,
      reason: 'internal-error',
      overridesApplied: [],
      baseClass: cls,
      baseReason: 'internal-error',
    };
  }
}
