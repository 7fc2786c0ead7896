/**
 * The target of a request a person is asked to approve, as they are shown it: the whole
 * path and query, with secret-shaped values redacted. An approval is bound to the digest of
 * the full request, so nobody is asked to approve a target they cannot see; a target that
 * cannot be shown faithfully is not shown at all, the request is refused as unreviewable.
 *
 * The rule (docs/serve.md, "What the reviewer sees"):
 * - the target is shown whole, path and query, in the characters the client sent;
 * - a secret-shaped path segment (the audit's path redaction) or query value is replaced by
 *   `{redacted}`: the reviewer still sees which segment or parameter it is and where;
 * - unreviewable: a target longer than REVIEW_TARGET_LIMIT characters (it cannot be shown
 *   whole), one not in origin form or carrying a `#` (what follows would not be shown), and
 *   one with a secret-shaped query name or bare query field (redacting it would hide which
 *   parameter the request sets, not only a value).
 */
import { redactPath } from './redact.js';
import { looksLikeSecret } from './secret-shape.js';

/** The longest target (characters, as sent) a reviewer is shown; a longer one is unreviewable. */
export const REVIEW_TARGET_LIMIT = 2048;

/** What replaces a secret-shaped path segment or query value (the audit's path marker). */
export const TARGET_REDACTED = '{redacted}';

/** Why a target cannot be shown faithfully; stable strings. */
export type UnreviewableTarget = 'target-too-long' | 'target-not-origin-form' | 'query-name-secret';

export type ReviewTarget = { ok: true; shown: string } | { ok: false; why: UnreviewableTarget };

/** A query part decoded the way servers read it (`+` is a space), for the detector only. */
function decoded(s: string): string {
  const plus = s.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(plus);
  } catch {
    return plus;
  }
}

/** The target as a reviewer is shown it, or why it cannot be shown faithfully. */
export function reviewTarget(target: string): ReviewTarget {
  if (target.length > REVIEW_TARGET_LIMIT) return { ok: false, why: 'target-too-long' };
  if (!target.startsWith('/') || target.includes('#')) return { ok: false, why: 'target-not-origin-form' };
  const q = target.indexOf('?');
  const path = redactPath(q === -1 ? target : target.slice(0, q));
  if (q === -1) return { ok: true, shown: path };
  const fields: string[] = [];
  for (const field of target.slice(q + 1).split('&')) {
    const eq = field.indexOf('=');
    const name = eq === -1 ? field : field.slice(0, eq);
    if (looksLikeSecret(decoded(name))) return { ok: false, why: 'query-name-secret' };
    if (eq === -1) fields.push(field);
    else {
      const value = field.slice(eq + 1);
      fields.push(`${name}=${looksLikeSecret(decoded(value)) ? TARGET_REDACTED : value}`);
    }
  }
  return { ok: true, shown: `${path}?${fields.join('&')}` };
}
