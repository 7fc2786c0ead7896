/**
 * Splitting an origin-form target and recognising GraphQL endpoints. One rule for every
 * method: a request is GraphQL when any server could route its path to a GraphQL handler.
 */
import { decodeRounds } from './path-match.js';

/** Path and raw query (without `?`) of an origin-form target; a fragment is dropped. */
export function splitTarget(target: string): { path: string; query: string | undefined } {
  let end = target.indexOf('#');
  if (end === -1) end = target.length;
  const q = target.indexOf('?');
  if (q === -1 || q > end) return { path: target.slice(0, end), query: undefined };
  return { path: target.slice(0, q), query: target.slice(q + 1, end) };
}

/** Everything before the first `?`, a `#` included: a server may not treat `#` as special. */
export function pathPart(target: string): string {
  const q = target.indexOf('?');
  return q === -1 ? target : target.slice(0, q);
}

/** `graphql` followed by the end or any character that cannot continue a route segment name. */
function segmentIsGraphql(seg: string): boolean {
  let i = 0;
  while (i < seg.length && /\s/.test(seg[i]!)) i++;
  if (!seg.startsWith('graphql', i)) return false;
  const c = seg.charCodeAt(i + 7);
  // [a-z0-9_-] would make another name (`graphqlx`, `graphql-v2`); anything else ends it
  return !((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95 || c === 45);
}

/**
 * Whether a path (the part of the target before `?`) may reach a GraphQL handler: some
 * segment, lower-cased and percent-decoded (once, twice or three times; `%uXXXX` too; `%2F`,
 * `\` as separators), reads `graphql` up to the first character that cannot continue a name
 * (`;params`, `.json`, a trailing space or NUL). Any segment, not only the last: Express
 * `app.use('/graphql', …)` and ASP.NET `MapGraphQL` also serve `/graphql/anything`; Rails
 * serves `/graphql.json`; most servers ignore case, a trailing slash and `;params`.
 */
export function isGraphqlPath(path: string): boolean {
  // fast exit for the common REST path: no "graphql" in any spelling, no escapes
  if (path.indexOf('%') === -1 && !/graphql/i.test(path)) return false;
  for (const text of decodeRounds(path)) {
    for (const seg of text.toLowerCase().split(/[\\/]/)) if (segmentIsGraphql(seg)) return true;
  }
  return false;
}
