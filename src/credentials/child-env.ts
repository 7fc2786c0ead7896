/**
 * The child's environment, built from nothing: no variable of this process
 * is inherited. Pure: the caller creates the HOME and TMPDIR directories and the CA file.
 *
 * Layers, later wins: vendor quiet-downs < manifest `env` < credentialEnv placeholders <
 * endpointEnv < platform-owned variables (proxy, CA trust, HOME, TMPDIR, PATH).
 * docs/child-env.md is the table.
 */
import { isPlatformOwnedEnvName } from '../manifest/rules-env.js';
import type { CliManifest } from '../manifest/types.js';

/** The value every credentialEnv variable holds: enough for the CLI to send its request at all. */
export const PLACEHOLDER_TOKEN = 'clibroker-placeholder-token';

/** A PATH with the system directories only: no user or project bin directories. */
export const MINIMAL_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * Settings that stop vendor CLIs prompting, phoning home or colouring output (each one
 * observed on gh, az, curl, Node or Python through an intercepting proxy). A manifest's own env may override these.
 */
export const QUIET_DOWNS: Readonly<Record<string, string>> = Object.freeze({
  LANG: 'C.UTF-8',
  TERM: 'dumb',
  NO_COLOR: '1',
  CI: '1',
  // gh: never prompt (it would wait on a TTY that is not there), no update notice.
  GH_PROMPT_DISABLED: '1',
  GH_NO_UPDATE_NOTIFIER: '1',
  GH_TELEMETRY: 'false',
  // az: the telemetry uploader is a detached process that would outlive the call.
  AZURE_CORE_COLLECT_TELEMETRY: 'no',
  AZURE_CORE_ONLY_SHOW_ERRORS: 'yes',
  // Confirmation is clibroker's job (approvals); az's prompt would just hang.
  AZURE_CORE_DISABLE_CONFIRM_PROMPT: 'yes',
  AZURE_CORE_NO_COLOR: 'yes',
});

export interface ChildEnvInput {
  cli: Pick<CliManifest, 'env' | 'credentialEnv' | 'endpointEnv'>;
  /** the session's proxy URL, `http://<session>:<secret>@127.0.0.1:<port>` */
  proxyUrl: string;
  /** path of a PEM file holding the session CA (plus system roots if the CLI needs them) */
  caFile: string;
  /**
   * a directory holding nothing but the CA file, for SSL_CERT_DIR: Go (gh) otherwise reads
   * every file of the system's certificate directory on each start (~40 ms for gh), and
   * trusts them beside the CA file
   */
  certDir?: string;
  /** a fresh directory per call */
  home: string;
  /** a fresh directory per call (gh caches responses, errors included, in $TMPDIR) */
  tmpdir: string;
  /** the organization endpoint's host, for endpointEnv */
  endpointHost?: string;
  /** PATH for the child; MINIMAL_PATH by default */
  path?: string;
}

/** The variables that trust the session CA, one per client family (docs/child-env.md). */
export const CA_TRUST_VARS = Object.freeze([
  'SSL_CERT_FILE',
  'REQUESTS_CA_BUNDLE',
  'CURL_CA_BUNDLE',
  'NODE_EXTRA_CA_CERTS',
  'GIT_SSL_CAINFO',
] as const);

/**
 * The platform-owned routing and trust of a child: the session's proxy URL in each proxy
 * variable the common clients read, and the CA file in each trust variable.
 */
export function proxyEnv(proxyUrl: string, caFile: string): Record<string, string> {
  // HTTP_PROXY is left unset: no client uses it for https URLs, and plain HTTP is refused
  // anyway. ALL_PROXY serves curl and Python; NO_PROXY is never set, so nothing bypasses
  // the broker.
  const env: Record<string, string> = { HTTPS_PROXY: proxyUrl, https_proxy: proxyUrl, ALL_PROXY: proxyUrl };
  // gh/Go, curl and OpenSSL read SSL_CERT_FILE; az/requests read REQUESTS_CA_BUNDLE (and
  // CURL_CA_BUNDLE); Node adds NODE_EXTRA_CA_CERTS; git reads GIT_SSL_CAINFO.
  for (const k of CA_TRUST_VARS) env[k] = caFile;
  return env;
}

/** The complete environment of one child process. */
export function buildChildEnv(input: ChildEnvInput): Record<string, string> {
  const env: Record<string, string> = { ...QUIET_DOWNS };
  for (const [k, v] of Object.entries(input.cli.env ?? {})) {
    // The manifest was validated; this guard keeps an unvalidated object from routing or trust.
    if (!isPlatformOwnedEnvName(k)) env[k] = v;
  }
  for (const name of input.cli.credentialEnv ?? []) {
    if (!isPlatformOwnedEnvName(name)) env[name] = PLACEHOLDER_TOKEN;
  }
  const ep = input.cli.endpointEnv;
  if (ep && input.endpointHost && !isPlatformOwnedEnvName(ep)) env[ep] = input.endpointHost;

  Object.assign(env, proxyEnv(input.proxyUrl, input.caFile));
  if (input.certDir !== undefined) env.SSL_CERT_DIR = input.certDir;
  env.HOME = input.home;
  env.TMPDIR = input.tmpdir;
  env.PATH = input.path ?? MINIMAL_PATH;
  return env;
}
