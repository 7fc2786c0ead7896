/** Splitting an origin-form target and recognising GraphQL endpoints (DESIGN §4). */

/** Path and raw query (without `?`) of an origin-form target; a fragment is dropped. */
export function splitTarget(target: string): { path: string; query: string | undefined } {
  let end = target.indexOf('#');
  if (end === -1) end = target.length;
  const q = target.indexOf('?');
  if (q === -1 || q > end) return { path: target.slice(0, end), query: undefined };
  return { path: target.slice(0, q), query: target.slice(q + 1, end) };
}

/** The exact rule: the last path segment is exactly `graphql` (`/graphql`, GHE `/api/graphql`). */
export function isGraphqlPath(path: string): boolean {
  return path === '/graphql' || path.endsWith('/graphql');
}

/**
 * A looser test used only where it can tighten: GET/HEAD to a path that many servers
 * route to their GraphQL handler anyway (trailing slash, `;params`, upper case, percent-
 * encoded letters). Express, for example, routes `/graphql/` and HEAD like GET /graphql,
 * so `GET /graphql/?query=mutation…` would run a mutation the exact rule calls a read.
 */
export function looksLikeGraphqlPath(path: string): boolean {
  // fast exit for the common REST path: no "graphql" in any spelling, no escapes
  if (!path.includes('%') && !/graphql/i.test(path)) return false;
  let p = path;
  if (p.includes('%')) {
    try {
      p = decodeURIComponent(p);
    } catch {
      // malformed escapes: judge the raw text
    }
  }
  p = p.toLowerCase().replace(/\\/g, '/');
  const segs = p.split('/').filter((s) => s !== '' && s !== '.');
  const last = segs[segs.length - 1];
  if (last === undefined) return false;
  const semi = last.indexOf(';');
  return (semi === -1 ? last : last.slice(0, semi)) === 'graphql';
}
