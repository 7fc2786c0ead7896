/**
 * `clibroker serve --demo`: the embedded mock vendor (src/demo/serve.ts) started in this
 * process, and a throwaway configuration written into a fresh 0700 temp directory — gh and
 * curl pinned from this machine, the github extension routed to the mock vendor through
 * `upstream`, every secret and token in a 0600 file, a SQLite store beside them with the
 * tools' allow switch raised to write — served as `serve --config` serves a configuration
 * (the same listening line, the same stop), with a human block after the listening line
 * naming the endpoints and their tokens. On SIGTERM or SIGINT the server stops, then the mock
 * vendor, then the temp directory is removed.
 *
 * Where bubblewrap cannot run, the demo's images are plain, which a server refuses to load
 * (CONFIG_IMAGE_PLAIN_UNDER_DAEMON): that case is served by the same serveHttp with plain
 * images allowed (its internal `allowPlainProfile`), after a printed warning.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/load.js';
import type { OperatorConfig } from '../config/types.js';
import { DEMO_EXECUTABLES, DEMO_REVIEWER, demoServeManifest, startServeDemoVendor } from '../demo/serve.js';
import { createHost } from '../host/host.js';
import { isolationUnavailable } from '../sandbox/isolated.js';
import { type ServeStopped, serveHttp } from '../serve/start.js';

interface ServeDemo {
  /** the 0700 temp directory holding the configuration, the secrets and the store */
  dir: string;
  /** the configuration file */
  file: string;
  /** `isolated` where bubblewrap runs here, else `plain` */
  profile: 'isolated' | 'plain';
  /** why bubblewrap cannot run here (only when the profile is plain) */
  isolationUnavailable?: string;
  /** the tokens written to the serve block (64 hex characters each) */
  tokens: { executor: string; mcp: string; reviewer: string };
  /** stops the mock vendor and removes the directory (idempotent) */
  close(): Promise<void>;
}

interface ServeDemoOptions {
  /** serve.port (the server's --port overrides it) */
  port?: number;
}

const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

/**
 * Starts the mock vendor, writes the demo's configuration and raises the tools' allow switch
 * in its store. Nothing is left behind on failure.
 */
async function prepareServeDemo(opts: ServeDemoOptions = {}): Promise<ServeDemo> {
  const { vendor, token: vendorToken } = await startServeDemoVendor();
  const dir = mkdtempSync(join(tmpdir(), 'clibroker-demo-'));
  chmodSync(dir, 0o700);
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      await vendor.close();
      rmSync(dir, { recursive: true, force: true });
    })();
    return closed;
  };
  try {
    const secret = (name: string, value: string): { file: string } => {
      const path = join(dir, `${name}.secret`);
      writeFileSync(path, value, { mode: 0o600 });
      return { file: path };
    };
    const tokens = {
      executor: randomBytes(32).toString('hex'),
      mcp: randomBytes(32).toString('hex'),
      reviewer: randomBytes(32).toString('hex'),
    };
    const unavailable = await isolationUnavailable();
    const profile = unavailable === undefined ? 'isolated' : 'plain';
    const manifest = join(dir, 'github.manifest.json');
    writeFileSync(manifest, `${JSON.stringify(demoServeManifest, null, 2)}\n`, { mode: 0o600 });
    const caFile = join(dir, 'vendor-ca.pem');
    writeFileSync(caFile, vendor.caPem, { mode: 0o600 });
    const config: OperatorConfig = {
      version: 1,
      // no conformance verdict is recorded for a throwaway store
      conformance: 'optional',
      organization: { ceiling: 'write' },
      images: {
        gh: { executable: DEMO_EXECUTABLES.gh, sha256: sha256(DEMO_EXECUTABLES.gh), profile },
        curl: { executable: DEMO_EXECUTABLES.curl, sha256: sha256(DEMO_EXECUTABLES.curl), profile },
      },
      extensions: {
        github: {
          manifest,
          sha256: sha256(manifest),
          connection: { kind: 'oauth_access_token', accessToken: secret('github', vendorToken) },
        },
      },
      store: join(dir, 'store.db'),
      upstream: {
        connectTo: Object.fromEntries(
          ['api.github.com', 'github.com'].map((h) => [h, `127.0.0.1:${vendor.port}`]),
        ),
        caFile,
        allowAddresses: ['127.0.0.0/8'],
      },
      serve: {
        host: '127.0.0.1',
        ...(opts.port !== undefined ? { port: opts.port } : {}),
        executorToken: secret('executor', tokens.executor),
        mcpToken: secret('mcp', tokens.mcp),
        reviewers: { [DEMO_REVIEWER]: secret('reviewer', tokens.reviewer) },
        executorMaxTier: 'write',
        cliTier: 'write',
      },
    };
    const file = join(dir, 'config.json');
    writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });

    // the allow switch a person raises in a real deployment: here, for every CLI of the extension
    const host = await createHost(
      await loadConfig(file),
      profile === 'plain' ? { allowPlainProfile: true } : {},
    );
    try {
      for (const cli of demoServeManifest.clis)
        await host.store.setAssignmentTier({
          extensionId: 'github',
          assignmentId: 'default',
          cliId: cli.id,
          tier: 'write',
          who: 'clibroker serve --demo',
        });
    } finally {
      await host.close();
    }
    return {
      dir,
      file,
      profile,
      ...(unavailable !== undefined ? { isolationUnavailable: unavailable } : {}),
      tokens,
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}

/** The human block `serve --demo` prints after its listening line. */
function serveDemoBanner(demo: ServeDemo, url: string): string {
  const t = demo.tokens;
  const mcpHost = JSON.stringify({
    mcpServers: {
      'clibroker-demo': { type: 'http', url: `${url}/mcp`, headers: { Authorization: `Bearer ${t.mcp}` } },
    },
  });
  const body = JSON.stringify({ toolId: 'gh_cli', input: { args: ['api', 'user'] } });
  const lines = [
    '',
    `clibroker serve --demo: a throwaway server on ${url}, gh and curl against an embedded GitHub-like mock vendor; nothing leaves this machine.`,
    'The tokens are printed because this is a throwaway demo bound to 127.0.0.1; a real deployment keeps them in 0600 files and never prints them.',
    `Tools gh_cli and curl_cli may write: a destructive request (gh repo delete acme/app --yes) waits until it is approved on the reviewer page.`,
    ...(demo.profile === 'plain'
      ? [
          `WARNING: bubblewrap cannot run here (${demo.isolationUnavailable}): the CLIs run with profile plain, with this process's own file access.`,
        ]
      : []),
    '',
    `MCP (Streamable HTTP): ${url}/mcp`,
    `  authorization: Bearer ${t.mcp}`,
    `  for an MCP host: ${mcpHost}`,
    '',
    'Platform API:',
    `  curl -s -H 'authorization: Bearer ${t.executor}' -H 'content-type: application/json' -d '${body}' ${url}/v1/tools/execute`,
    '',
    `Reviewer page: ${url}/review`,
    `  reviewer token (${DEMO_REVIEWER}): ${t.reviewer}`,
    '',
    `Configuration and store: ${demo.dir} (removed on SIGTERM or SIGINT; Ctrl-C stops the demo)`,
    '',
  ];
  return lines.join('\n');
}

/** Always 127.0.0.1: the demo prints its tokens, so nothing else may reach it. */
const DEMO_HOST = '127.0.0.1';

/** Runs the demo server until SIGTERM or SIGINT; the port defaults to serve's own (8787). */
export async function serveDemo(port: number | undefined): Promise<ServeStopped> {
  const demo = await prepareServeDemo(port !== undefined ? { port } : {});
  const write = (s: string): void => void process.stdout.write(s);
  try {
    const out = (line: string): void => {
      write(line);
      write(serveDemoBanner(demo, String(JSON.parse(line).url)));
    };
    return await serveHttp(demo.file, {
      host: DEMO_HOST,
      out,
      ...(port !== undefined ? { port } : {}),
      // no bubblewrap here: the banner has said the CLIs run with this process's file access
      ...(demo.profile === 'plain' ? { allowPlainProfile: true as const } : {}),
    });
  } finally {
    await demo.close();
  }
}
