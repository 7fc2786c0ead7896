/**
 * What the isolated profile shows a CLI of the host's file system: an allowlist, never a
 * denylist. A file the daemon's user can read is not thereby the CLI's, because the agent
 * chooses the CLI's arguments (`curl file://…`, `-d @file`, `gh api --input file`); so the
 * child sees the system directories programs and shared libraries live in, the few files of
 * `/etc` that a CLI reads to start and to connect, and what the operator's image adds
 * (`readOnlyPaths`) — nothing else of `/etc`, `/var`, `/run`, `/home`, `/root`, `/srv`,
 * `/opt`, `/mnt` or the host's `/tmp`.
 *
 * docs/sandbox.md lists the entries and why each is there.
 */
import { within } from './hidden.js';

/** The host's top-level program and library directories, bound read-only (symlinks kept: merged /usr). */
export const SYSTEM_DIRS: readonly string[] = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
];

/**
 * The entries of `/etc` a CLI may read, each bound read-only where it exists (a missing one is
 * skipped). Chosen from what gh, az and curl open at start and while they make requests
 * through the broker; none of them holds a secret on a standard system.
 */
export const ETC_ALLOWED: readonly string[] = [
  // the dynamic loader
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  // names: users and groups (getpwuid for HOME fallbacks), hosts, services, resolver settings
  '/etc/nsswitch.conf',
  '/etc/passwd',
  '/etc/group',
  '/etc/hosts',
  '/etc/host.conf',
  '/etc/resolv.conf',
  '/etc/gai.conf',
  '/etc/services',
  '/etc/protocols',
  // time zone
  '/etc/localtime',
  '/etc/timezone',
  // TLS: the system's CA bundles and library settings (never /etc/ssl/private)
  '/etc/ssl/certs',
  '/etc/ssl/openssl.cnf',
  '/etc/ca-certificates',
  '/etc/ca-certificates.conf',
  '/etc/pki/tls/certs',
  '/etc/pki/ca-trust',
  '/etc/gnutls',
  // which program a generic name runs (python3, …), file types, the system's name
  '/etc/alternatives',
  '/etc/mime.types',
  '/etc/os-release',
  '/etc/debian_version',
  '/etc/lsb-release',
];

/**
 * Whether the isolated profile shows `path` (an absolute, normalised host path) to a CLI whose
 * image adds `readOnlyPaths`. The call's own directory, the pinned entrypoint and the
 * launcher's tree are shown too, but they are the call's or the operator's program, never a
 * place for a secret. `clibroker doctor` asks this of every configuration, secret and store
 * path of a deployment.
 */
export function visibleInSandbox(path: string, readOnlyPaths: readonly string[] = []): boolean {
  for (const dir of [...SYSTEM_DIRS, ...ETC_ALLOWED, ...readOnlyPaths]) if (within(path, dir)) return true;
  return false;
}
