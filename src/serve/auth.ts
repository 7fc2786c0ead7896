/**
 * Who is calling: a bearer token matched against the configuration's tokens, one role each.
 * The executor runs tools, a reviewer (named) decides approvals, the MCP token opens /mcp.
 * Every configured token is compared (digests, in constant time) whatever matched first, so
 * neither a token's length nor which role it has shows in the time taken. A token that matches
 * nobody counts against the client's address (throttle.ts); a locked-out client is refused
 * before its token is compared.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { ServeTokens } from '../config/types.js';
import { BrokerError, brokerError } from '../errors.js';
import { admit, failed, type Throttle } from './throttle.js';

export type Role = 'executor' | 'reviewer' | 'mcp';

export interface Caller {
  role: Role;
  /** the reviewer's configured name; 'executor' or 'mcp' for those roles */
  who: string;
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();
const same = (a: Buffer, b: Buffer): boolean => timingSafeEqual(a, b);

/** Every role the presented token holds (one, unless the operator reused a token). */
export function rolesOf(token: string, tokens: ServeTokens): Caller[] {
  const d = digest(token);
  const out: Caller[] = [];
  const all: [Role, string, string | undefined][] = [
    ['executor', 'executor', tokens.executor],
    ['mcp', 'mcp', tokens.mcp],
    ...tokens.reviewers.map(([who, t]): [Role, string, string] => ['reviewer', who, t]),
  ];
  for (const [role, who, t] of all) {
    if (t === undefined || t === '') continue;
    if (same(d, digest(t))) out.push({ role, who });
  }
  return out;
}

const CONFIG_FIELD: Record<Role, string> = {
  executor: 'serve.executorToken',
  reviewer: 'serve.reviewers',
  mcp: 'serve.mcpToken',
};

/**
 * The caller of a request that needs one of `allowed`.
 * @throws BrokerError SERVE_UNAUTHORIZED (no token, a token of nobody, no token configured for
 *   the endpoint), SERVE_FORBIDDEN (a valid token of another role), SERVE_RATE_LIMITED (too many
 *   wrong tokens from this address or from all: the token is not compared)
 */
export async function authorize(
  req: IncomingMessage,
  tokens: ServeTokens,
  allowed: readonly Role[],
  throttle: Throttle,
  line?: Record<string, unknown>,
): Promise<Caller> {
  const configured = allowed.some((r) =>
    r === 'reviewer' ? tokens.reviewers.length > 0 : tokens[r] !== undefined && tokens[r] !== '',
  );
  const base = new BrokerError('SERVE_UNAUTHORIZED').message;
  if (!configured)
    throw new BrokerError('SERVE_UNAUTHORIZED', {
      message: `${base} (this endpoint is closed: the configuration sets no ${allowed.map((r) => CONFIG_FIELD[r]).join(' or ')})`,
    });
  const m = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
  if (!m)
    throw new BrokerError('SERVE_UNAUTHORIZED', { message: `${base} (no Authorization: Bearer header)` });
  await admit(throttle, req, line);
  const roles = rolesOf(m[1]!, tokens);
  // one token in two roles would let a reviewer run tools (or an executor decide): fail closed
  if (roles.length > 1)
    throw brokerError(
      'SERVE_FORBIDDEN',
      { twoRoles: true },
      { details: { roles: roles.map((r) => r.role) } },
    );
  const hit = roles.find((c) => allowed.includes(c.role));
  if (hit) return hit;
  if (roles.length === 0) {
    await failed(throttle, req, line);
    throw new BrokerError('SERVE_UNAUTHORIZED', { message: `${base} (the token does not match)` });
  }
  throw brokerError(
    'SERVE_FORBIDDEN',
    { role: roles[0]!.role, needs: allowed },
    { details: { role: roles[0]!.role, needs: [...allowed] } },
  );
}

/**
 * The reviewer a sign-in token (POST /review/login) is, or undefined (counted as a failure); a
 * token configured for two roles signs in nobody, as it authorizes nothing elsewhere. `line` is
 * the request's log line: a refusal or a lock-out is written on it.
 * @throws SERVE_RATE_LIMITED (too many wrong tokens: this one is not compared)
 */
export async function signIn(
  req: IncomingMessage,
  token: string,
  tokens: ServeTokens,
  throttle: Throttle,
  line: Record<string, unknown>,
): Promise<Caller | undefined> {
  await admit(throttle, req, line);
  const roles = token ? rolesOf(token, tokens) : [];
  const reviewer = roles.length === 1 && roles[0]!.role === 'reviewer' ? roles[0] : undefined;
  if (!reviewer && roles.length === 0) await failed(throttle, req, line);
  return reviewer;
}
