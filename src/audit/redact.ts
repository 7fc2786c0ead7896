/**
 * Path redaction for audit events (DESIGN §7): no query, and any segment that looks like a
 * secret replaced. Audit events are stored durably and shown to people, so a token pasted
 * into a URL path must not survive into them.
 */

// Known token prefixes (GitHub, Slack, AWS, OpenAI-style) and long opaque runs.
const SECRET_SEGMENT = /^(gh[pousr]_|github_pat_|xox[abpors]-|AKIA|ASIA|sk-|eyJ)|^[A-Za-z0-9+/_=-]{32,}$/;

function looksSecret(seg: string): boolean {
  if (!SECRET_SEGMENT.test(seg)) return false;
  // A long run of one class (a hex commit sha, a UUID-ish id) is an identifier, not a secret;
  // a secret mixes upper, lower and digits.
  if (/^(gh[pousr]_|github_pat_|xox[abpors]-|AKIA|ASIA|sk-|eyJ)/.test(seg)) return true;
  return /[A-Z]/.test(seg) && /[a-z]/.test(seg) && /[0-9]/.test(seg);
}

/** `/a/b?c` → `/a/b`; secret-shaped segments → `{redacted}`. */
export function redactPath(target: string): string {
  const q = target.search(/[?#]/);
  const path = q === -1 ? target : target.slice(0, q);
  if (path.length > 2048) return `${redactPath(path.slice(0, 2048))}…`;
  let out = '';
  for (const seg of path.split('/')) {
    if (out !== '' || seg !== '') out += '/';
    let decoded = seg;
    try {
      decoded = decodeURIComponent(seg);
    } catch {}
    out += looksSecret(decoded) ? '{redacted}' : seg;
  }
  return out === '' ? '/' : out.startsWith('/') ? out : `/${out}`;
}
