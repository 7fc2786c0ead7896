/**
 * Environment rules: the child's environment is built from nothing, and the
 * platform owns the variables that route traffic, decide trust or change what runs. A
 * manifest may not set those, may not put secrets in values, and its names may not collide.
 */
import { secretKind } from '../audit/secret-shape.js';
import { type PathSeg, type ProblemList, is } from './problems.js';

export const MAX_ENV_VALUE_CHARS = 1024;

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

// Compared upper-cased: proxy variables are honoured in any case (curl reads https_proxy).
const OWNED_NAMES = new Set([
  // routing and trust
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'ALL_PROXY',
  'NO_PROXY',
  'FTP_PROXY',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
  'REQUESTS_CA_BUNDLE',
  'CURL_CA_BUNDLE',
  'GIT_SSL_CAINFO',
  'GIT_SSL_CAPATH',
  'AWS_CA_BUNDLE',
  'PIP_CERT',
  'NODE_TLS_REJECT_UNAUTHORIZED',
  'PYTHONHTTPSVERIFY',
  'SSLKEYLOGFILE',
  'OPENSSL_CONF',
  'OPENSSL_ENGINES',
  'OPENSSL_MODULES',
  // the sandbox's own layout
  'PATH',
  'HOME',
  'TMPDIR',
  'TMP',
  'TEMP',
  'XDG_CONFIG_HOME',
  'XDG_CACHE_HOME',
  'XDG_DATA_HOME',
  'XDG_STATE_HOME',
  'XDG_RUNTIME_DIR',
  // what runs, and with what
  'BASH_ENV',
  'ENV',
  'SHELL',
  'IFS',
  'PROMPT_COMMAND',
  'SHELLOPTS',
  'BASHOPTS',
  'NODE_OPTIONS',
  'NODE_PATH',
  'PYTHONSTARTUP',
  'PYTHONPATH',
  'PYTHONHOME',
  'PYTHONUSERBASE',
  'PYTHONINSPECT',
  'PERL5LIB',
  'PERL5OPT',
  'PERLLIB',
  'RUBYOPT',
  'RUBYLIB',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
  'PAGER',
  'GIT_PAGER',
  'GH_PAGER',
  'MANPAGER',
  'EDITOR',
  'VISUAL',
  'GIT_EDITOR',
  'GH_EDITOR',
  'BROWSER',
  'GH_BROWSER',
  'GIT_EXEC_PATH',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_ASKPASS',
  'SSH_ASKPASS',
  'GIT_PROXY_COMMAND',
  'GIT_TEMPLATE_DIR',
  'GIT_CONFIG',
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_SYSTEM',
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
  'AZURE_CLI_DISABLE_CONNECTION_VERIFICATION',
]);

const OWNED_PATTERNS: readonly RegExp[] = [
  /^LD_/, // dynamic loader: LD_PRELOAD, LD_LIBRARY_PATH, …
  /^DYLD_/,
  /_PROXY$/, // any client's proxy setting (npm_config_https_proxy, …)
  /_CA_BUNDLE$/,
  /(?:^|_)NO_VERIFY$/, // GIT_SSL_NO_VERIFY, ADAL_PYTHON_SSL_NO_VERIFY
  /(?:^|_)INSECURE$/, // CURL_INSECURE-style switches
  /(?:^|_)SKIP_(?:TLS_)?VERIFY$/,
  /^GIT_CONFIG_(?:KEY|VALUE)_/,
];

/** True for a variable name the platform owns (any case). Shared with the child-env builder. */
export function isPlatformOwnedEnvName(name: string): boolean {
  const up = name.toUpperCase();
  return OWNED_NAMES.has(up) || OWNED_PATTERNS.some((re) => re.test(up));
}

const OWNED_EXPECTED =
  'a name the platform does not own (not proxy, certificate trust, PATH/HOME/TMPDIR, loader or execution-changing variables)';

function checkName(name: string, path: readonly PathSeg[], out: ProblemList): boolean {
  if (!NAME_RE.test(name)) {
    out.add('MANIFEST_ENV_NAME_INVALID', path, 'a variable name [A-Za-z_][A-Za-z0-9_]*', name);
    return false;
  }
  if (isPlatformOwnedEnvName(name)) {
    out.add('MANIFEST_ENV_NAME_RESERVED', path, OWNED_EXPECTED, name);
    return false;
  }
  return true;
}

/** credentialEnv, env and endpointEnv of one CLI at `at`. */
export function checkEnv(cli: Record<string, unknown>, at: readonly PathSeg[], out: ProblemList): void {
  const credNames = new Set<string>();
  if (is.arr(cli.credentialEnv)) {
    cli.credentialEnv.forEach((n, i) => {
      if (is.str(n) && checkName(n, [...at, 'credentialEnv', i], out)) credNames.add(n);
    });
  }
  const env = is.obj(cli.env) ? cli.env : {};
  for (const [name, value] of Object.entries(env)) {
    const p = [...at, 'env', name];
    checkName(name, p, out);
    if (credNames.has(name)) {
      out.add(
        'MANIFEST_ENV_NAME_IN_CREDENTIAL_ENV',
        p,
        'a name not listed in credentialEnv (those hold the placeholder)',
        name,
      );
    }
    if (!is.str(value)) continue;
    if (value.length > MAX_ENV_VALUE_CHARS) {
      out.add('MANIFEST_ENV_VALUE_TOO_LONG', p, `at most ${MAX_ENV_VALUE_CHARS} characters`, value);
    }
    const kind = secretKind(value);
    if (kind)
      out.add(
        'MANIFEST_ENV_VALUE_SECRET',
        p,
        `a non-secret value (this one looks like a ${kind}); secrets come from the connection`,
        value,
      );
  }
  const ep = cli.endpointEnv;
  if (is.str(ep)) {
    const p = [...at, 'endpointEnv'];
    if (checkName(ep, p, out) && (credNames.has(ep) || Object.hasOwn(env, ep))) {
      out.add(
        'MANIFEST_ENDPOINT_ENV_CONFLICT',
        p,
        'a name that is neither a credentialEnv name nor an env key',
        ep,
      );
    }
  }
}
