/**
 * What the daemon tests share, in two parts.
 *
 * In process: a ToolHost-shaped object that records every call (the transport's tests need
 * no broker behind it), a daemon on a real unix socket in a fresh directory, and a raw
 * HTTP/1.1 exchange for what a well-behaved client never sends.
 *
 * As an operator deploys it: the built binary spawned as `clibroker daemon --config`, waited
 * for until it listens, `clibroker run` as a separate process that knows only what the test
 * puts in its environment, and the configuration those tests start from.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OperatorConfig } from '../../src/config/types.js';
import { type Daemon, type DaemonOptions, startDaemon } from '../../src/daemon/server.js';
import { BrokerError } from '../../src/errors.js';
import type { CallOptions, ToolHost, ToolListing, ToolOutput } from '../../src/host/types.js';
import { curlCli, ghCli, githubExtension } from '../../src/manifest/examples.js';
import type { ExtensionManifest } from '../../src/manifest/types.js';
import type { MockVendor } from '../../src/mockvendor/server.js';
import type { ConfigDir } from '../helpers/config.js';
import { leakGuard, type LeakGuard } from '../helpers/leaks.js';

// ---- in process ----

export interface RecordingHost extends ToolHost {
  calls: { tool: string; input: unknown; opts: CallOptions | undefined }[];
  resumed: string[];
  /** what runTool does; default: echo the input back in stdout */
  onRun: (tool: string, input: unknown, opts: CallOptions | undefined) => Promise<ToolOutput>;
  closed: boolean;
}

export const TOOLS: ToolListing[] = [
  { id: 'github:cli:gh', name: 'gh_cli', description: 'GitHub CLI', inputSchema: { type: 'object' } },
  { id: 'github:cli:curl', name: 'curl_cli', description: 'curl', inputSchema: { type: 'object' } },
];

export function output(stdout: string, over: Partial<ToolOutput> = {}): ToolOutput {
  return {
    exitCode: 0,
    stdout,
    stderr: '',
    truncated: false,
    runId: 'run-1',
    cliTier: 'read',
    cliTierReason: 'requested read',
    ...over,
  };
}

/** A host whose tools are TOOLS; an unknown tool is TOOL_VENDOR_CLI_NOT_OFFERED, as the real host answers. */
export function recordingHost(): RecordingHost {
  const host: RecordingHost = {
    calls: [],
    resumed: [],
    closed: false,
    onRun: async (_tool, input) => output(JSON.stringify(input)),
    tools: () => TOOLS,
    async runTool(tool, input, opts) {
      host.calls.push({ tool, input, opts });
      if (!TOOLS.some((t) => t.id === tool || t.name === tool)) {
        throw new BrokerError('TOOL_VENDOR_CLI_NOT_OFFERED', {
          details: { tools: TOOLS.map((t) => t.name) },
        });
      }
      return host.onRun(tool, input, opts);
    },
    async resume(id) {
      host.resumed.push(id);
      if (id !== 'a-1') throw new BrokerError('APPROVAL_NOT_FOUND', { details: { approvalId: id } });
      return output('resumed', { runId: 'run-2', cliTier: 'write' });
    },
    approve: () => Promise.reject(new Error('not over the daemon')),
    reject: () => Promise.reject(new Error('not over the daemon')),
    async close() {
      host.closed = true;
    },
  };
  return host;
}

/** A fresh directory for sockets, removed at teardown. */
export function socketDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'cbd-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface Fixture {
  host: RecordingHost;
  daemon: Daemon;
  socket: string;
  dir: string;
  guard: LeakGuard;
}

/** A daemon over a recording host; closed at teardown, after which no watched secret may be in its log. */
export async function daemonFixture(
  t: { teardown(fn: () => void | Promise<void>): void },
  opts: Partial<DaemonOptions> = {},
  secrets: string[] = [],
): Promise<Fixture> {
  const dir = socketDir(t);
  const host = recordingHost();
  const guard = leakGuard(secrets);
  const socket = join(dir, 'broker.sock');
  const daemon = await startDaemon(host, { socket, logger: guard.logger, ...opts });
  t.teardown(async () => {
    await daemon.close();
    guard.assertClean();
  });
  return { host, daemon, socket, dir, guard };
}

/** Write `head` (and `body`) to the socket; resolve with the status and parsed body once it closes or answers. */
export function raw(
  socket: string,
  text: string | Buffer,
): Promise<{ status: number; body: unknown; text: string }> {
  return new Promise((resolve, reject) => {
    const s = connect(socket);
    let got = '';
    s.on('data', (c) => {
      got += c.toString('utf8');
    });
    s.on('error', reject);
    s.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0);
      const at = got.indexOf('\r\n\r\n');
      let body: unknown;
      try {
        body = JSON.parse(got.slice(at + 4));
      } catch {
        body = undefined;
      }
      resolve({ status, body, text: got });
    });
    s.end(text);
  });
}

/** A POST with a JSON body, as raw bytes. */
export function post(path: string, body: string, headers: Record<string, string> = {}): string {
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return `POST ${path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
}

// ---- as an operator deploys it ----

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read envelopes freely
  env: any;
}

const PATH = process.env['PATH'] ?? '/usr/bin:/bin';

/**
 * Run the built binary as a separate process with exactly `env` (and PATH); `as` is an argv
 * prefix that runs it as another user (tests/helpers/os-users.ts `asUser`).
 */
export function runBinary(
  bin: string,
  args: string[],
  env: Record<string, string>,
  input = '',
  as: readonly string[] = [],
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const argv = [...as, process.execPath, bin, ...args];
    const child = spawn(argv[0]!, argv.slice(1), { env: { PATH, ...env }, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(stdout);
      } catch {
        parsed = undefined;
      }
      resolve({ code, stdout, stderr, env: parsed });
    });
    child.stdin.end(input);
  });
}

/** Spawn the built binary's daemon over `config` and wait for its listening line. */
export function spawnDaemon(
  bin: string,
  config: string,
): Promise<{
  child: ChildProcessWithoutNullStreams;
  listening: Record<string, unknown>;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}> {
  return new Promise((resolve, reject) => {
    // nothing of the test's environment: the configuration's secrets are in files
    const child = spawn(process.execPath, [bin, 'daemon', '--config', config], {
      env: { PATH },
      stdio: 'pipe',
    });
    let out = '';
    let err = '';
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.stderr.on('data', (c) => {
      err += c;
    });
    child.stdout.on('data', (c) => {
      out += c;
      const line = out.split('\n')[0]!;
      if (out.includes('\n') && line.includes('daemon.listening'))
        resolve({ child, listening: JSON.parse(line), out: () => out, err: () => err, exited });
    });
    void exited.then((code) =>
      reject(new Error(`the daemon exited (${code}) before listening: ${out}${err}`)),
    );
    setTimeout(
      () => reject(new Error(`the daemon did not listen within 60 s: ${out}${err}`)),
      60_000,
    ).unref();
  });
}

/** The GitHub extension the end-to-end tests install: the example gh and curl, each pinned from /usr/bin. */
export const github: ExtensionManifest = githubExtension([
  ghCli({ image: 'gh', entrypoint: '/usr/bin/gh' }),
  curlCli({ image: 'curl', entrypoint: '/usr/bin/curl' }),
]);

/**
 * The configuration the end-to-end tests start from, without a daemon block (each test adds
 * its own): `github` installed from its pinned manifest with the connection token in a 0600
 * file, gh and curl pinned, writes allowed by the organization, the store in `dir`, and
 * api.github.com routed to `vendor`.
 */
export function githubConfig(dir: ConfigDir, token: string, vendor: MockVendor): OperatorConfig {
  return {
    version: 1,
    // the conformance gate has its own tests; these are about something else
    conformance: 'optional',
    organization: { ceiling: 'write' },
    images: { gh: dir.image('/usr/bin/gh'), curl: dir.image('/usr/bin/curl') },
    extensions: {
      github: {
        ...dir.manifest(github),
        connection: { kind: 'oauth_access_token', accessToken: dir.secret('github', token) },
      },
    },
    store: join(dir.dir, 'store.db'),
    deadlineSeconds: 60,
    upstream: dir.upstream(vendor, ['api.github.com']),
  };
}
