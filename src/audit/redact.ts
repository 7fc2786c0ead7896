/**
 * Path redaction for audit events: no query, and any segment that looks like a
 * secret replaced. Audit events are stored durably and shown to people, so a token pasted
 * into a URL path must not survive into them. The detector is the one manifest validation
 * uses (secret-shape.ts): it errs on the side of "secret", so a long random id
 * in a path is redacted too.
 */
import { looksLikeSecret } from './secret-shape.js';

/**
 * Headers by which the child presents a credential of its own. The strip phase removes every
 * one of them (src/broker/headers.ts), and the log redactor censors them: one list for both.
 */
export const CHILD_CREDENTIAL_HEADERS: readonly string[] = [
  'proxy-authenticate',
  'proxy-authorization',
  'authorization',
];

const MAX_PATH = 2048;

/** `/a/b?c` → `/a/b`; secret-shaped segments → `{redacted}`, userinfo (`id:pw@host`) → `{redacted}@host`. */
export function redactPath(target: string): string {
  const q = target.search(/[?#]/);
  let path = q === -1 ? target : target.slice(0, q);
  const cut = path.length > MAX_PATH;
  if (cut) path = path.slice(0, MAX_PATH);
  const segments = path.split('/').map((seg) => {
    let decoded = seg;
    try {
      decoded = decodeURIComponent(seg);
    } catch {}
    if (looksLikeSecret(decoded)) return '{redacted}';
    // userinfo (`id:secret@host`, a CONNECT target or a pasted URL): a password has no shape.
    const at = decoded.lastIndexOf('@');
    if (at > 0) {
      const user = decoded.slice(0, at);
      if (user.includes(':') || looksLikeSecret(user))
        return `{redacted}@${encodeURIComponent(decoded.slice(at + 1)).replace(/%3A/gi, ':')}`;
    }
    return seg;
  });
  const out = segments.join('/');
  return (out.startsWith('/') ? out : `/${out}`) + (cut ? '…' : '');
}
