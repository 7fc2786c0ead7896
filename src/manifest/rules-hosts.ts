/**
 * Host rules: egress hosts and credentialHosts entries. Hosts are compared as
 * exact strings, so they must be written in the one canonical form: lower-case DNS names,
 * no wildcard, IP literal, port or trailing dot.
 */
import { isDnsName } from '../policy/dns-name.js';
import { type PathSeg, type ProblemList, is } from './problems.js';

export const MAX_CREDENTIAL_HOST_ENTRIES = 16;
export const MAX_HOSTS_PER_ENTRY = 16;
export const MAX_SCOPES_PER_ENTRY = 8;

/**
 * True for an exact lower-case DNS name (the broker's reading: src/policy/dns-name.ts), so a
 * name the manifest accepts is one a session accepts.
 */
export const isExactDnsName: (host: string) => boolean = isDnsName;

// OAuth's scope-token: the token endpoint splits the scope parameter on spaces, so a scope
// with a space in it would ask for two (or more) scopes that nobody reviewed as such.
const SCOPE_TOKEN_RE = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/** True for one OAuth scope token: printable ASCII without space, `"` or `\`. */
export function isScopeToken(scope: string): boolean {
  return SCOPE_TOKEN_RE.test(scope);
}

const SCOPE_EXPECTED =
  'one OAuth scope token (printable ASCII without space, double quote or backslash), e.g. https://graph.microsoft.com/.default';

const DNS_EXPECTED =
  'an exact lower-case DNS name such as api.example.com (no wildcard, IP literal, port, upper case or trailing dot)';

/** Egress hosts must be exact DNS names too: they are what credentialHosts are checked against. */
export function checkEgress(egress: unknown, out: ProblemList): void {
  if (!is.arr(egress)) return;
  egress.forEach((h, i) => {
    if (is.str(h) && !isExactDnsName(h))
      out.add('MANIFEST_EGRESS_HOST_NOT_DNS', ['egress', i], DNS_EXPECTED, h);
  });
}

/**
 * credentialHosts of one CLI. `egress` is undefined when the CLI is validated on its own
 * (defineCli): the egress rule then waits for defineExtension.
 */
export function checkCredentialHosts(
  entries: unknown,
  at: readonly PathSeg[],
  egress: ReadonlySet<string> | undefined,
  out: ProblemList,
): void {
  if (!is.arr(entries)) return;
  const path = [...at, 'credentialHosts'];
  if (entries.length > MAX_CREDENTIAL_HOST_ENTRIES) {
    out.add(
      'MANIFEST_CREDENTIAL_HOSTS_TOO_MANY',
      path,
      `at most ${MAX_CREDENTIAL_HOST_ENTRIES} entries`,
      `${entries.length} entries`,
    );
  }
  const seenIn = new Map<string, number>();
  entries.forEach((entry, i) => {
    if (!is.obj(entry)) return;
    const ep = [...path, i];
    const { hosts, scopes } = entry;
    if (is.arr(hosts)) {
      if (hosts.length === 0)
        out.add('MANIFEST_CREDENTIAL_HOSTS_ENTRY_EMPTY', [...ep, 'hosts'], '1 to 16 hosts', []);
      if (hosts.length > MAX_HOSTS_PER_ENTRY) {
        out.add(
          'MANIFEST_CREDENTIAL_HOSTS_ENTRY_TOO_MANY_HOSTS',
          [...ep, 'hosts'],
          `at most ${MAX_HOSTS_PER_ENTRY} hosts`,
          `${hosts.length} hosts`,
        );
      }
      hosts.forEach((h, j) => {
        if (!is.str(h)) return;
        const hp = [...ep, 'hosts', j];
        if (!isExactDnsName(h)) {
          out.add('MANIFEST_CREDENTIAL_HOST_NOT_DNS', hp, DNS_EXPECTED, h);
          return;
        }
        const earlier = seenIn.get(h);
        if (earlier !== undefined && earlier !== i) {
          out.add(
            'MANIFEST_CREDENTIAL_HOST_DUPLICATE',
            hp,
            `each host in one entry only (already in entry ${earlier})`,
            h,
          );
        }
        if (earlier === undefined) seenIn.set(h, i);
        if (egress && !egress.has(h))
          out.add('MANIFEST_CREDENTIAL_HOST_NOT_IN_EGRESS', hp, "a host in the extension's egress list", h);
      });
    }
    if (is.arr(scopes) && scopes.length > MAX_SCOPES_PER_ENTRY) {
      out.add(
        'MANIFEST_CREDENTIAL_HOSTS_TOO_MANY_SCOPES',
        [...ep, 'scopes'],
        `at most ${MAX_SCOPES_PER_ENTRY} scopes`,
        `${scopes.length} scopes`,
      );
    }
    // `scopes: []` reads as "mint with no scope" but would mean "the connection's own
    // credential": one of the two readings is wrong, so neither is taken.
    if (is.arr(scopes) && scopes.length === 0) {
      out.add(
        'MANIFEST_CREDENTIAL_HOSTS_SCOPES_EMPTY',
        [...ep, 'scopes'],
        "1 to 8 scopes, or no scopes field for the connection's own credential",
        [],
      );
    }
    if (is.arr(scopes)) {
      scopes.forEach((sc, k) => {
        if (is.str(sc) && sc !== '' && !isScopeToken(sc))
          out.add('MANIFEST_CREDENTIAL_HOSTS_SCOPE_INVALID', [...ep, 'scopes', k], SCOPE_EXPECTED, sc);
      });
    }
  });
}
