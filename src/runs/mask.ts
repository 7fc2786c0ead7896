/**
 * What the agent sees of the credentials: nothing. The stamper's handouts are recorded as
 * they leave, and the CLI's output is masked with them and the connection's own secrets
 * before the result is returned.
 */
import type { CredentialStamper } from '../broker/types.js';

/**
 * Values the stamper handed out that are shorter than this are not masked in output: every
 * short word would go. The connection's own secrets are masked whatever their length.
 */
const MASK_MIN = 6;

/** A secret's first characters left at the end of cut output are dropped from this many on. */
const PREFIX_MIN = 4;

/**
 * Records every credential the stamper hands out (the whole header value and the part after
 * its scheme), so the result can mask them: a vendor that reflects the request (a debug
 * endpoint, an error page quoting the Authorization header) would otherwise show the child,
 * and so the agent, the real credential.
 */
export function recordingStamper(s: CredentialStamper, seen: Set<string>): CredentialStamper {
  const record = (v: string | undefined): string | undefined => {
    if (v) {
      seen.add(v);
      const sp = v.indexOf(' ');
      if (sp > 0) seen.add(v.slice(sp + 1).trim());
    }
    return v;
  };
  return {
    ...s,
    authorizationFor(host) {
      const v = s.authorizationFor(host);
      return typeof v === 'string' || v === undefined ? record(v) : Promise.resolve(v).then(record);
    },
  };
}

/**
 * `text` with every known secret replaced by a marker no longer than it (the output cap
 * holds). Output the cap cut (`truncated`) may end inside a secret: the part before the cut
 * is dropped too, or the agent would hold all of the secret but its last characters.
 */
export function maskOutput(
  text: string,
  secrets: Iterable<string>,
  truncated: boolean,
  own: ReadonlySet<string>,
): string {
  let out = text;
  // longest first: a header value before the token inside it
  const known = [...secrets]
    .filter((x) => x.length >= MASK_MIN || (x.length > 0 && own.has(x)))
    .sort((a, b) => b.length - a.length);
  for (const k of known) {
    if (out.includes(k)) out = out.split(k).join(k.length >= 10 ? '[REDACTED]' : '*'.repeat(k.length));
  }
  if (!truncated) return out;
  let cut = 0;
  for (const k of known) {
    for (let n = Math.min(k.length - 1, out.length); n >= PREFIX_MIN && n > cut; n--) {
      if (out.endsWith(k.slice(0, n))) {
        cut = n;
        break;
      }
    }
  }
  return cut > 0 ? out.slice(0, out.length - cut) : out;
}
