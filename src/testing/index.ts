/**
 * `clibroker/testing`: what a host needs to test its integration without a network or a
 * real vendor account. An embedded mock vendor (GitHub-, Azure- or generic-shaped; real
 * HTTPS on loopback with its own CA), the one `upstream` option that routes a broker to it,
 * and the environment a child process needs to go through a session. docs/testing.md has a
 * complete example.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrokerOptions } from '../broker/types.js';
import { mockVendor as knownVendor } from '../conformance/known.js';
import { CA_TRUST_VARS, proxyEnv } from '../credentials/child-env.js';
import type { Connection } from '../credentials/types.js';
import {
  type GithubVendorInstallationToken,
  type GithubVendorPermissions,
  githubVendor,
} from '../mockvendor/github.js';
import {
  type MockVendor,
  startMockVendor as startServer,
  type VendorHandler,
  type VendorRequest,
  type VendorResponse,
} from '../mockvendor/server.js';

export { CA_TRUST_VARS };
export type {
  GithubVendorInstallationToken,
  GithubVendorPermissions,
  MockVendor,
  VendorHandler,
  VendorRequest,
  VendorResponse,
};

/**
 * - `github`: the REST and GraphQL calls of gh and curl against api.github.com (`GET /user`,
 *   issues, `repos/{owner}/{repo}` incl. DELETE); a request without the mock's token gets 401.
 * - `azure`: Entra ID sign-in (login.microsoftonline.com) and ARM resource groups
 *   (management.azure.com); only tokens it minted for its client secret are accepted.
 * - `generic`: your `handler`, or, without one, a 200 echo of each request's method, host,
 *   path and whether it carried an Authorization header.
 */
export type MockShape = 'github' | 'azure' | 'generic';

/** `github` by default; only the generic shape takes a `handler` (the others answer by themselves). */
export type MockVendorOptions =
  | {
      shape?: 'github';
      /**
       * A GitHub App installed on the mock: `connection` is then a `github_app` connection
       * (with a private key made for this vendor), each call's installation token is minted
       * by the mock, and a route its permissions do not cover answers 403 "Resource not
       * accessible by integration". `granted`: what the installation may be asked for (all by default).
       */
      app?: boolean | { granted?: GithubVendorPermissions };
    }
  | { shape: 'azure' }
  | {
      shape: 'generic';
      /** the generic vendor's answers; a request echo by default */
      handler?: VendorHandler;
    };

/** A mock vendor started by `startMockVendor`, with the connection it accepts where its shape has one. */
export interface TestVendor extends MockVendor {
  readonly shape: MockShape;
  /**
   * The credential this vendor accepts, to hand to a runner or host as the connection
   * (undefined for a generic vendor: it checks none). It exists only for the mock.
   */
  readonly connection: Connection | undefined;
  /** every installation token the app mode minted, in order (empty otherwise): what each could do */
  readonly installationTokens: readonly GithubVendorInstallationToken[];
}

/** Answers every request with a JSON echo of what arrived (no body, no header values). */
const echo: VendorHandler = (req) => ({
  status: 200,
  body: {
    method: req.method,
    host: req.host,
    path: req.path,
    authorization: req.headers.authorization !== undefined,
  },
});

/**
 * Starts a mock vendor on 127.0.0.1 serving any host name (by SNI, with leaves from its own
 * CA). Every request it received is in `log`; `close()` stops it.
 */
export async function startMockVendor(opts: MockVendorOptions = {}): Promise<TestVendor> {
  const shape = opts.shape ?? 'github';
  const installationTokens: GithubVendorInstallationToken[] = [];
  const app = (opts.shape === undefined || opts.shape === 'github') && opts.app ? opts.app : undefined;
  if (app) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const connection: Connection = {
      kind: 'github_app',
      appId: '1001',
      installationId: '2002',
      privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    };
    const server = await startServer(
      githubVendor({
        app: {
          appId: connection.appId,
          installationId: connection.installationId,
          publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
          ...(app !== true && app.granted ? { granted: app.granted } : {}),
          onToken: (m) => installationTokens.push(m),
        },
      }),
    );
    return Object.assign(server, { shape, connection, installationTokens });
  }
  const known = shape === 'generic' ? undefined : knownVendor(shape);
  const handler = opts.shape === 'generic' ? opts.handler : undefined;
  const server = await startServer(known?.vendor ?? handler ?? echo);
  return Object.assign(server, { shape, connection: known?.connection, installationTokens });
}

/**
 * The broker's `upstream` option that sends every egress host to `mock`: its resolve, its CA
 * trusted, and loopback allowed (the broker refuses loopback addresses otherwise).
 *
 * ```ts
 * const broker = await createBroker({ upstream: routeToMock(mock) });
 * ```
 */
export function routeToMock(
  mock: Pick<MockVendor, 'caPem' | 'resolve'>,
): NonNullable<BrokerOptions['upstream']> {
  return { ca: mock.caPem, resolve: (host) => mock.resolve(host), allowAddresses: ['127.0.0.0/8'] };
}

/** Options of `childEnv`. */
export interface ChildEnvOptions {
  /**
   * where to write the session CA (PEM, mode 0600), to keep or remove yourself; by default a
   * fresh temporary directory's `ca.pem`, removed when the process exits
   */
  caFile?: string;
}

/** The temporary directories `childEnv` made, removed when the process exits. */
const caDirs = new Set<string>();
let removing = false;
function removeAtExit(dir: string): void {
  caDirs.add(dir);
  if (removing) return;
  removing = true;
  process.once('exit', () => {
    for (const d of caDirs) rmSync(d, { recursive: true, force: true });
  });
}

/**
 * The variables a child process needs to go through `session`: the proxy URL (with the
 * session's secret) in `HTTPS_PROXY`, `https_proxy` and `ALL_PROXY`, and the session CA,
 * written to a file, in the trust variable of each common client (`SSL_CERT_FILE` for curl,
 * gh and OpenSSL, `REQUESTS_CA_BUNDLE` and `CURL_CA_BUNDLE` for Python and az,
 * `NODE_EXTRA_CA_CERTS` for Node, `GIT_SSL_CAINFO` for git). `NO_PROXY` and `no_proxy` are
 * set empty, so merged over a test process's environment nothing routes around the broker.
 * The CA file replaces the client's trust store: only the session CA is trusted. Written to a
 * temporary directory of its own (unless `caFile` says where), it is removed when the process
 * exits, so a test run leaves no CA files behind.
 */
export function childEnv(
  session: { readonly proxyUrl: string; readonly caCertPem: string },
  opts: ChildEnvOptions = {},
): Record<string, string> {
  let caFile = opts.caFile;
  if (caFile === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'clibroker-test-'));
    removeAtExit(dir);
    caFile = join(dir, 'ca.pem');
  }
  writeFileSync(caFile, session.caCertPem, { mode: 0o600 });
  return { ...proxyEnv(session.proxyUrl, caFile), NO_PROXY: '', no_proxy: '' };
}
