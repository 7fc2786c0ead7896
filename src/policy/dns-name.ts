/**
 * The one reading of a host name the configuration, the manifests and the broker all use.
 * Hosts are compared as exact strings, so each must be in its one canonical form: a
 * lower-case DNS name of at least two labels, with no wildcard, IP literal, port or trailing
 * dot. A leaf module (no imports) so every layer can use it.
 */

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * A last label the URL standard reads as a number: all digits, or `0x` with hex digits (or
 * none). Such a host is parsed as an IPv4 address (`10.0.0.1`, `a.0x1a`) or refused by
 * `new URL`, so it is never a name; a last label merely starting with a digit (`1a`) is.
 */
const NUMERIC_LAST = /^(?:[0-9]+|0x[0-9a-f]*)$/;

/**
 * True for an exact lower-case DNS name: 1–253 characters, at least two labels of 1–63
 * letters, digits and inner hyphens, the last not numeric (so no IPv4 literal, and nothing
 * with `:`, `[`, `*`, `_`, upper case or a trailing dot).
 */
export function isDnsName(host: string): boolean {
  if (host.length === 0 || host.length > 253) return false;
  const labels = host.split('.');
  if (labels.length < 2) return false;
  for (const l of labels) if (!LABEL.test(l)) return false;
  return !NUMERIC_LAST.test(labels[labels.length - 1]!);
}
