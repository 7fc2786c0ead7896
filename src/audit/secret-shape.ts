/**
 * Secret-shaped value detection. One module, shared by manifest validation
 * (env values and preamble arguments may not carry secrets) and by log/audit redaction
 * (paths and messages must not leak them). Pure, no I/O, no imports: it sits with the audit
 * layer, below the manifest, the credentials and the engine, so each of them reaches it downward.
 *
 * The rules err on the side of "secret": a false positive costs a manifest author a rename,
 * a false negative leaks a credential into a log.
 */

/** Which rule matched; stable strings, safe to log. */
export type SecretKind =
  | 'github-token'
  | 'slack-token'
  | 'aws-access-key'
  | 'sk-key'
  | 'gitlab-token'
  | 'jwt'
  | 'pem-block'
  | 'url-credentials'
  | 'high-entropy';

/** A rule is a regex, or (where a regex would backtrack) a linear scan yielding [start, end) spans. */
type PrefixRule =
  | { kind: SecretKind; re: RegExp }
  | { kind: SecretKind; spans: (text: string) => Iterable<[number, number]> };

const isB64url = (c: number): boolean =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 95;

/**
 * JWTs, as `eyJ…(4+).eyJ…(4+).sig`: both JSON parts are base64url of "{". A scan instead of a
 * regex: the regex restarted a failing search at every "eyJ" of a long run ("eyJ-eyJ-…"), so
 * 1 MiB took minutes. Here every character is looked at a bounded number of times: runs of
 * [A-Za-z0-9_.-] are cut into dot-separated segments, and a match is the first "eyJ" of a
 * segment with 4+ characters after it, a next segment of "eyJ" and 4+, and a third segment.
 */
function* jwtSpans(text: string): Generator<[number, number]> {
  const n = text.length;
  let nextEyj = text.indexOf('eyJ');
  let i = 0;
  while (i < n && nextEyj !== -1) {
    while (i < n && !(isB64url(text.charCodeAt(i)) || text.charCodeAt(i) === 46)) i++;
    const segs: number[] = [i]; // segment starts; a segment ends one before the next start
    while (i < n && (isB64url(text.charCodeAt(i)) || text.charCodeAt(i) === 46)) {
      if (text.charCodeAt(i) === 46) segs.push(i + 1);
      i++;
    }
    segs.push(i + 1);
    const end = (j: number): number => segs[j + 1]! - 1;
    for (let j = 0; j + 3 < segs.length; j++) {
      if (nextEyj !== -1 && nextEyj < segs[j]!) nextEyj = text.indexOf('eyJ', segs[j]);
      if (nextEyj === -1) return;
      const o = nextEyj;
      if (o + 7 > end(j)) continue;
      const p = segs[j + 1]!;
      if (text.startsWith('eyJ', p) && p + 7 <= end(j + 1)) {
        yield [o, end(j + 2)];
        j += 2;
      }
    }
  }
}

// Token formats with a fixed, documented prefix. The lookbehind keeps "task-list"-style
// words from matching `sk-`; the minimum tail lengths keep bare prefixes ("ghp_") harmless.
const PREFIX_RULES: readonly PrefixRule[] = [
  { kind: 'github-token', re: /(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{16,}/ },
  { kind: 'github-token', re: /(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{20,}/ },
  { kind: 'slack-token', re: /(?<![A-Za-z0-9])xox[a-z]-[A-Za-z0-9-]{8,}/ },
  { kind: 'aws-access-key', re: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])/ },
  { kind: 'sk-key', re: /(?<![A-Za-z0-9])sk[-_](?:live_|test_|proj-|ant-)?[A-Za-z0-9_-]{16,}/ },
  { kind: 'gitlab-token', re: /(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{16,}/ },
  { kind: 'jwt', spans: jwtSpans },
  { kind: 'pem-block', re: /-----BEGIN [A-Z0-9 ]+-----/ },
  // scheme://user:password@host. The scheme is at most 32 characters: unbounded, a long run of
  // letters with no "://" made every start position scan to its end (quadratic).
  { kind: 'url-credentials', re: /[a-z][a-z0-9+.-]{0,31}:\/\/[^/\s:@]+:[^/\s@]+@/i },
];

/** Runs of token-alphabet characters long enough to be a key. */
const RUN_RE = /[A-Za-z0-9+/_-]{32,}={0,2}/g;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEX_RE = /^[0-9a-f]+$/i;

/** Shannon entropy in bits per character. */
export function shannonEntropy(s: string): number {
  if (s.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/**
 * A random-looking run: hex of ≥ 32 chars with ≥ 3 bits/char (random hex averages ~3.7;
 * "0000…" or "abababab…" stay below), or a mixed run with upper case, lower case and digits
 * and ≥ 4.2 bits/char (random base64 of 32+ chars averages ~4.6, paths and words stay
 * below and rarely mix all three classes). UUIDs are identifiers (tenant, subscription,
 * client ids), not secrets, and are skipped.
 */
function isHighEntropyRun(run: string): boolean {
  const bare = run.replace(/=+$/, '');
  if (UUID_RE.test(bare)) return false;
  if (HEX_RE.test(bare)) return shannonEntropy(bare) >= 3;
  if (!/[A-Z]/.test(bare) || !/[a-z]/.test(bare) || !/[0-9]/.test(bare)) return false;
  return shannonEntropy(bare) >= 4.2;
}

/** The kind of secret `value` looks like (anywhere inside it), or undefined. */
export function secretKind(value: string): SecretKind | undefined {
  for (const r of PREFIX_RULES) {
    if ('re' in r ? r.re.test(value) : !r.spans(value)[Symbol.iterator]().next().done) return r.kind;
  }
  for (const m of value.matchAll(RUN_RE)) if (isHighEntropyRun(m[0])) return 'high-entropy';
  return undefined;
}

/** True when `value` contains anything secret-shaped. */
export function looksLikeSecret(value: string): boolean {
  return secretKind(value) !== undefined;
}

/**
 * Digests this process computed itself (the sha256 of a file or manifest it hashed) and shows
 * on purpose, so the operator can review and pin them: a run equal to one of them is not
 * redacted. Only 64-hex sha256 digests are taken, at most DIGESTS_MAX of them; anything else
 * is redacted as before.
 */
const COMPUTED_DIGESTS = new Set<string>();
const DIGESTS_MAX = 4096;
const SHA256_HEX_RE = /^[0-9a-f]{64}$/;

/** Declare `digest` a sha256 this process computed (never a secret): `redactSecrets` leaves it. */
export function markComputedDigest(digest: string): void {
  if (SHA256_HEX_RE.test(digest) && COMPUTED_DIGESTS.size < DIGESTS_MAX) COMPUTED_DIGESTS.add(digest);
}

/**
 * Directories this process was pointed at by its operator (the configuration file's), shown on
 * purpose in its messages: a temp directory's random name can make a path look like a key. A
 * secret-shaped run that starts with a marked directory is judged by what follows it, so
 * `/tmp/demo-JxKtK8/config` stays readable while a key written after the directory is still
 * redacted. Only a run's start is set aside, never text inside it, so a key that merely
 * contains a directory's text keeps every character it is judged by. Taken: absolute, 8 to
 * 4096 characters, at most OPERATOR_DIRS_MAX of them.
 */
const OPERATOR_DIRS = new Set<string>();
const OPERATOR_DIRS_MAX = 64;

/** Declare `dir` an absolute directory the operator named (never a secret): see OPERATOR_DIRS. */
export function markOperatorDirectory(dir: string): void {
  if (dir.startsWith('/') && dir.length >= 8 && dir.length <= 4096 && OPERATOR_DIRS.size < OPERATOR_DIRS_MAX)
    OPERATOR_DIRS.add(dir);
}

/** Whether a secret-shaped run is an operator's directory followed by nothing secret-shaped. */
function onlyOperatorDirectory(run: string): boolean {
  for (const dir of OPERATOR_DIRS) {
    if (!run.startsWith(dir)) continue;
    const rest = run.slice(dir.length);
    if (![...rest.matchAll(RUN_RE)].some((m) => isHighEntropyRun(m[0]))) return true;
  }
  return false;
}

/** The marker that replaces a secret-shaped substring. */
export const REDACTED = '[REDACTED]';

/**
 * `text` with every secret-shaped substring replaced by `[REDACTED]`, for logs, audit paths
 * and error details. PEM blocks are cut from BEGIN to END (or to the end of the text).
 */
export function redactSecrets(text: string): string {
  let out = text.replace(/-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(?:-----END [A-Z0-9 ]+-----|$)/g, REDACTED);
  for (const r of PREFIX_RULES) {
    if (r.kind === 'pem-block') continue;
    out =
      're' in r
        ? out.replace(new RegExp(r.re.source, `${r.re.flags.replace('g', '')}g`), REDACTED)
        : cutSpans(out, r.spans(out));
  }
  return out.replace(RUN_RE, (run) =>
    isHighEntropyRun(run) && !COMPUTED_DIGESTS.has(run) && !onlyOperatorDirectory(run) ? REDACTED : run,
  );
}

function cutSpans(text: string, spans: Iterable<[number, number]>): string {
  let out = '';
  let at = 0;
  for (const [a, b] of spans) {
    out += text.slice(at, a) + REDACTED;
    at = b;
  }
  return at === 0 ? text : out + text.slice(at);
}

/**
 * Mask the literal occurrences of known secrets (a client secret, a minted token) in `text`,
 * then any other secret-shaped substring. Known secrets shorter than 4 characters are still
 * masked: a short secret is still a secret.
 */
export function maskKnownSecrets(text: string, known: readonly string[]): string {
  let out = text;
  for (const k of known) if (k) out = out.split(k).join(REDACTED);
  return redactSecrets(out);
}
