/**
 * Fixtures for the daemon tests: a ToolHost-shaped object that records every call (the
 * transport's tests need no broker behind it), a daemon on a real unix socket in a fresh
 * directory, and a raw HTTP/1.1 exchange for what a well-behaved client never sends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Daemon, type DaemonOptions, startDaemon } from '../../src/daemon/server.js';
import { BrokerError } from '../../src/errors.js';
import type { CallOptions, ToolHost, ToolListing, ToolOutput } from '../../src/host/types.js';
import { leakGuard, type LeakGuard } from '../helpers/leaks.js';

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
