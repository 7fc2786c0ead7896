/**
 * runSandboxed: the sandbox's one entry point. Reads top to bottom:
 * check input → pick the profile → make the call's directories → build the env → resolve
 * the program → (isolated: start the relay) → preamble → command → remove everything.
 */
import { realpath, writeFile } from 'node:fs/promises';
import { constants } from 'node:os';
import { BrokerError, brokerError } from '../errors.js';
import { buildChildEnv } from '../credentials/child-env.js';
import { makeCallDirs, removeCallDirs, resolveEntrypoint, type CallDirs } from './dirs.js';
import {
  BWRAP,
  bwrapArgs,
  inSystemDirs,
  isolatedLauncher,
  type Launcher,
  PERL,
  runFiles,
  startRelay,
} from './isolated.js';
import { launcherSource } from './launcher.js';
import { checkInput } from './limits.js';
import { spawnCapped, type SpawnOutcome } from './spawn.js';
import { sweepByHome } from './sweep.js';
import { decodeOutput } from './text.js';
import { SANDBOX_LIMITS, type SandboxOptions, type SandboxProfile, type SandboxResult } from './types.js';

type Launch = (args: readonly string[], stdin: Buffer | undefined, capBytes: number) => Promise<SpawnOutcome>;

/**
 * Runs `entrypoint args` (after the preamble, if any) in a fresh sandbox and returns how it
 * ended. A non-zero exit, a kill at the deadline or cut output are data in the result.
 * @throws BrokerError INVALID_TOOL_INPUT (input over the limits, before anything runs),
 *   MANIFEST_INVALID (image names no profile), TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE (isolated
 *   cannot run here and `strictProfile` or `hiddenPaths` forbid the fallback to plain; before
 *   anything is created), CLI_SPAWN_FAILED (program missing or not
 *   executable), CLI_PREAMBLE_FAILED (the preamble exited non-zero), CLI_TIMEOUT (the deadline
 *   passed during the preamble)
 */
export async function runSandboxed(opts: SandboxOptions): Promise<SandboxResult> {
  const { deadlineMs, profile: requested } = checkInput(opts);
  const started = Date.now();
  const deadlineAt = started + deadlineMs;
  const bwrap = opts.bwrap ?? BWRAP;
  let profile: SandboxProfile = requested;
  let profileFallback: string | undefined;
  let launcher: Launcher | undefined;
  if (requested === 'isolated') {
    // Picked once per process: perl where it runs under bwrap, else node.
    const choice = await isolatedLauncher(bwrap, opts.perl ?? PERL);
    profileFallback = choice.unavailable;
    launcher = choice.launcher;
    // Paths asked to be hidden would be readable in plain: that is no fallback either.
    if (profileFallback && (opts.strictProfile || (opts.hiddenPaths?.length ?? 0) > 0)) {
      throw new BrokerError('TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE', { details: { reason: profileFallback } });
    }
    if (profileFallback) profile = 'plain';
  }

  const dirs = await makeCallDirs(opts.session.caCertPem);
  let closeRelay: (() => Promise<void>) | undefined;
  try {
    const env = buildChildEnv({
      ...opts.childEnv,
      proxyUrl: opts.session.proxyUrl,
      caFile: dirs.caFile,
      certDir: dirs.certs,
      home: dirs.home,
      tmpdir: dirs.tmp,
    });
    const file = await resolveEntrypoint(opts.entrypoint, env.PATH);
    let launch: Launch;
    if (profile === 'isolated' && launcher) {
      const isolated = await prepareIsolated(dirs, opts, file, bwrap, launcher);
      closeRelay = isolated.close;
      launch = (args, stdin, capBytes) =>
        isolated.run(args, {
          env,
          stdin,
          capBytes,
          deadlineAt,
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
    } else {
      launch = async (args, stdin, capBytes) => {
        const out = await spawnCapped({
          file,
          argv: args,
          env,
          cwd: dirs.home,
          stdin,
          deadlineAt,
          capBytes,
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
        await sweepByHome(dirs.home);
        return out;
      };
    }

    let preamble: SandboxResult['preamble'];
    if (opts.preamble) {
      // Its output is never kept: it may echo account details the caller must not see.
      const p = await launch(opts.preamble, undefined, 0);
      preamble = { exitCode: p.exitCode, signal: p.signal, durationMs: p.durationMs };
      if (p.timedOut) throw new BrokerError('CLI_TIMEOUT', { details: { phase: 'preamble', deadlineMs } });
      if (p.exitCode !== 0)
        throw new BrokerError('CLI_PREAMBLE_FAILED', { details: { exitCode: p.exitCode, signal: p.signal } });
    }

    const out = await launch(opts.args, opts.stdin, SANDBOX_LIMITS.maxOutputBytes);
    const text = decodeOutput(out.stdout, out.stderr, out.truncated, SANDBOX_LIMITS.maxOutputBytes);
    return {
      exitCode: out.exitCode,
      signal: out.signal,
      stdout: text.stdout,
      stderr: text.stderr,
      truncated: text.truncated,
      timedOut: out.timedOut,
      durationMs: Date.now() - started,
      profile,
      ...(profileFallback ? { profileFallback } : {}),
      hiddenPathsEnforced: profile === 'isolated',
      ...(preamble ? { preamble } : {}),
    };
  } finally {
    await closeRelay?.();
    await removeCallDirs(dirs);
  }
}

interface IsolatedRun {
  env: Record<string, string>;
  stdin: Buffer | undefined;
  capBytes: number;
  deadlineAt: number;
  signal?: AbortSignal;
}

/** Writes the launcher, starts the relay, and returns how to run one argv inside bwrap. */
async function prepareIsolated(
  dirs: CallDirs,
  opts: SandboxOptions,
  file: string,
  bwrap: string,
  launcher: Launcher,
) {
  const url = new URL(opts.session.proxyUrl);
  const port = Number(url.port);
  // The launcher listens on the namespace's own 127.0.0.1:<port>, so the URL must say exactly that.
  if (url.hostname !== '127.0.0.1' || !(port > 0)) {
    throw brokerError(
      'INTERNAL_ERROR',
      { reason: 'the isolated profile needs a proxy URL on 127.0.0.1 with a port' },
      { details: { proxyHost: url.hostname } },
    );
  }
  const files = runFiles(dirs, launcher.kind);
  await writeFile(files.launcher, launcherSource(launcher.kind), { mode: 0o500 });
  const relay = await startRelay(files.socket, port);
  // The node launcher's own tree, where it lies outside the system directories (perl needs none).
  const readOnly = [...(opts.readOnlyPaths ?? []), ...launcher.readOnly];
  // A program outside the bound system directories must still be there to run; so must the
  // file a symlink in them leads to (/usr/local/bin/x → /opt/x/bin/x), or it dangles inside.
  if (!inSystemDirs(file)) readOnly.push(file);
  const real = await realpath(file);
  if (real !== file && !inSystemDirs(real)) readOnly.push(real);

  const run = async (args: readonly string[], r: IsolatedRun): Promise<SpawnOutcome> => {
    // Worked out per run from the host as it is then (the preamble and the command each).
    const argv = bwrapArgs(
      dirs,
      readOnly,
      [launcher.interpreter, files.launcher, String(port), files.socket, file, ...args],
      opts.hiddenPaths,
    );
    const fd3 = envEntries(r.env, file);
    const out = await spawnCapped({
      file: bwrap,
      argv,
      env: {},
      cwd: dirs.home,
      stdin: r.stdin,
      deadlineAt: r.deadlineAt,
      capBytes: r.capBytes,
      fd3,
      // the launcher's status comes on a pipe only it holds: nothing the CLI runs can forge it
      fd4: true,
      ...(r.signal ? { signal: r.signal } : {}),
    });
    const status = parseStatus(out.fd4 ?? '');
    if (status?.spawnError)
      throw new BrokerError('CLI_SPAWN_FAILED', {
        details: { entrypoint: file, errno: status.spawnError, profile: 'isolated' },
      });
    if (status?.launcherError)
      throw brokerError(
        'INTERNAL_ERROR',
        { reason: 'the isolated launcher could not start (its listener, a fork or its descriptors)' },
        { details: { errno: status.launcherError, port } },
      );
    // Without a status the launcher itself was killed (deadline): bwrap's own exit stands.
    if (status && !out.timedOut)
      return { ...out, exitCode: status.exitCode ?? null, signal: status.signal ?? null };
    return out;
  };
  return { run, close: relay.close };
}

/**
 * The child's env as the launcher reads it on fd 3: `NAME=value` entries, each ended by a NUL.
 * @throws BrokerError CLI_SPAWN_FAILED when a name or value holds a NUL byte: it would end the
 *   entry early and start another variable (the plain profile's spawn refuses it too)
 */
function envEntries(env: Record<string, string>, entrypoint: string): Buffer {
  let text = '';
  for (const [k, v] of Object.entries(env)) {
    if (k.includes('\0') || v.includes('\0'))
      throw new BrokerError('CLI_SPAWN_FAILED', {
        details: { entrypoint, reason: 'an environment variable holds a NUL byte' },
      });
    text += `${k}=${v}\0`;
  }
  return Buffer.from(text);
}

interface LauncherStatus {
  exitCode?: number | null;
  signal?: NodeJS.Signals | null;
  spawnError?: string;
  launcherError?: string;
}

/** Number → name; the first name wins where two share a number (SIGABRT before SIGIOT, as node reports it). */
function byNumber<T extends string>(table: Record<string, number>): Map<number, T> {
  const out = new Map<number, T>();
  for (const [name, n] of Object.entries(table)) if (!out.has(n)) out.set(n, name as T);
  return out;
}
const signalNames = byNumber<NodeJS.Signals>(constants.signals);
const errnoNames = byNumber<string>(constants.errno);

/** The launcher's one status line (launcher.ts), with numbers turned back into names. */
function parseStatus(line: string): LauncherStatus | undefined {
  const m = /^(exit|signal|spawn-error|launcher-error) (\d+)$/.exec(line);
  if (!m) return undefined;
  const n = Number(m[2]);
  const errno = errnoNames.get(n) ?? `errno ${n}`;
  switch (m[1]) {
    case 'exit':
      return { exitCode: n, signal: null };
    case 'signal':
      return { exitCode: null, signal: signalNames.get(n) ?? null };
    case 'spawn-error':
      return { spawnError: errno };
    default:
      return { launcherError: errno };
  }
}
