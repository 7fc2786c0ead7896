/**
 * Path and host redaction for audit events: no query, and any path segment or host label
 * that looks like a secret replaced. Audit events are stored durably and shown to people, so
 * a token pasted into a URL path — or into a host name, which a child can make up at will —
 * must not survive into them. The detector is the one manifest validation uses
 * (secret-shape.ts): it errs on the side of "secret", so a long random id in a path or a
 * label is redacted too.
 */
import { looksLikeSecret, shannonEntropy } from './secret-shape.js';

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

/** What replaces a secret-shaped path segment or host label. */
const REDACTED_PART = '{redacted}';

/** A label-shaped run long enough to be a key (DNS labels are at most 63 characters). */
const LABEL_RUN_RE = /[a-z0-9_-]{32,}/g;

/**
 * A lower-case run of letters and digits as random as a key. Host names are case-insensitive
 * and reach the broker lower-cased, so the detector's own rule for random runs — which wants
 * upper case, lower case and digits — cannot see a token in a label. Random base-36 text of
 * 32+ characters has ~4.7 bits per character; long ordinary labels
 * (`my-organisation-production-eastus2-01`, ~4.0) stay below the detector's 4.2.
 */
function randomLowerRun(run: string): boolean {
  return /[a-z]/.test(run) && /[0-9]/.test(run) && shannonEntropy(run) >= 4.2;
}

function secretLabel(label: string): boolean {
  if (looksLikeSecret(label)) return true;
  const lower = label.toLowerCase();
  for (const m of lower.matchAll(LABEL_RUN_RE)) if (randomLowerRun(m[0])) return true;
  return false;
}

/**
 * `ghp_….example.com` → `{redacted}.example.com`: every secret-shaped DNS label replaced,
 * ordinary ones (`api.github.com`, `my-org-prod-eastus2`) kept. A secret that spans labels
 * (a JWT's dots read as a name's dots) leaves nothing of the name: `{redacted}`.
 */
export function redactHost(host: string): string {
  let hit = false;
  const labels = host.split('.').map((label) => {
    if (!secretLabel(label)) return label;
    hit = true;
    return REDACTED_PART;
  });
  if (hit) return labels.join('.');
  return looksLikeSecret(host) ? REDACTED_PART : host;
}

/**
 * `text` (a refusal message that may name hosts: the CONNECT host, a mismatched SNI or Host)
 * with every label-shaped run {@link redactHost} would redact for its randomness replaced.
 * The detector's other shapes are the log redactor's to replace (`redactLogText`).
 */
export function redactHostLabels(text: string): string {
  return text.replace(/[A-Za-z0-9_-]{32,}/g, (run) =>
    randomLowerRun(run.toLowerCase()) ? REDACTED_PART : run,
  );
}

/** Paths and hosts a memo keeps at most each; past it the oldest is dropped. */
export const REDACT_MEMO_ENTRIES = 256;

/**
 * {@link redactPath} and {@link redactHost} remembered, for one session's events: a CLI asks the
 * same few hosts and paths over and over, and each redaction decodes and weighs every segment
 * or label (~3–9 µs). A path is keyed by what redactPath reads of a target, the part before the
 * first `?` or `#`, byte for byte. Held by the session, so the unredacted keys go with it.
 */
export class RedactMemo {
  readonly #paths = new Map<string, string>();
  readonly #hosts = new Map<string, string>();
  readonly #max: number;

  constructor(max = REDACT_MEMO_ENTRIES) {
    this.#max = max;
  }

  /** Entries held now, paths and hosts (tests). */
  get size(): number {
    return this.#paths.size + this.#hosts.size;
  }

  /** `redactPath(target)`. */
  path(target: string): string {
    const q = target.search(/[?#]/);
    const key = q === -1 ? target : target.slice(0, q);
    if (key.length > MAX_PATH) return redactPath(target);
    return remember(this.#paths, key, this.#max, () => redactPath(key));
  }

  /** `redactHost(host)`. */
  host(host: string): string {
    if (host.length > 255) return redactHost(host);
    return remember(this.#hosts, host, this.#max, () => redactHost(host));
  }
}

function remember(map: Map<string, string>, key: string, max: number, make: () => string): string {
  const hit = map.get(key);
  if (hit !== undefined) return hit;
  const out = make();
  if (map.size >= max) map.delete(map.keys().next().value!);
  map.set(key, out);
  return out;
}
