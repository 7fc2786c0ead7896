/**
 * The sandbox, as an agent's CLI meets it: no file of the deployment may lie under a path the
 * isolated profile shows (DEPLOY_SANDBOX_SHOWS; the sandbox masks the files the configuration
 * names, but a copy beside them, a renamed file or a future change of the masks would be
 * readable), and bubblewrap must run as the daemon's user (DEPLOY_SANDBOX_UNAVAILABLE).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { visibleInSandbox } from '../sandbox/allowlist.js';
import { BWRAP, PERL, bwrapArgs, isolationUnavailable } from '../sandbox/isolated.js';
import type { Deployment } from './deployment.js';
import { shown } from './files.js';
import type { DaemonUser, DoctorProblem } from './types.js';

/** Every sensitive path under a path some isolated image's sandbox shows, as written and as its real path. */
export async function sandboxShows(d: Deployment, beside: readonly string[]): Promise<DoctorProblem[]> {
  const isolated = d.images.filter((i) => i.profile === 'isolated');
  if (isolated.length === 0) return [];
  const paths: [string, string][] = [
    [d.config, 'the configuration'],
    ...d.secrets.flatMap((s): [string, string][] => ('file' in s ? [[s.file, `the secret of ${s.at}`]] : [])),
    ...beside.map((p): [string, string] => [p, 'a file beside a secret']),
    ...d.manifests.map((m): [string, string] => [m.file, `the manifest of ${m.at}`]),
    ...(d.store ? [[d.store, 'the store'] as [string, string]] : []),
  ];
  const out: DoctorProblem[] = [];
  const seen = new Set<string>();
  for (const [path, what] of paths) {
    if (seen.has(path)) continue;
    seen.add(path);
    const real = await realpath(path).catch(() => path);
    const images = isolated.filter(
      (i) => visibleInSandbox(path, i.readOnlyPaths) || visibleInSandbox(real, i.readOnlyPaths),
    );
    if (images.length === 0) continue;
    out.push({
      code: 'DEPLOY_SANDBOX_SHOWS',
      path: shown(path),
      message: `${what}${real !== path ? ` (really ${shown(real)})` : ''} lies under a path the sandbox of image${images.length > 1 ? 's' : ''} ${images.map((i) => i.name).join(', ')} shows (a system directory, an allowed /etc entry or readOnlyPaths); move it, e.g. under /etc/clibroker`,
    });
  }
  return out;
}

/** Runs `argv` and resolves with its exit code and the start of its stderr. */
function run(argv: readonly string[]): Promise<{ code: number | null; err: string; spawnError?: string }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'], env: {} });
    let err = '';
    child.stderr.on('data', (c: Buffer) => {
      if (err.length < 2000) err += c.toString();
    });
    child.on('error', (e: NodeJS.ErrnoException) =>
      resolve({ code: null, err, spawnError: e.code ?? e.message }),
    );
    child.on('close', (code) => resolve({ code, err: err.trim().slice(0, 400) }));
  });
}

/**
 * Why bubblewrap cannot run the isolated profile as the daemon's user, or undefined when it
 * can. As that user: the daemon's own probe. As root for another user: bwrap with the
 * profile's flags, run as that user (setpriv with its groups), starting perl or /bin/sh.
 */
export async function sandboxProbe(daemon: DaemonUser, bwrap: string = BWRAP): Promise<string | undefined> {
  const uid = process.getuid?.() ?? 0;
  if (uid === daemon.uid) return isolationUnavailable(bwrap);
  const tail = existsSync(PERL) ? [PERL, '-e', '0'] : ['/bin/sh', '-c', ':'];
  const argv = [
    'setpriv',
    `--reuid=${daemon.uid}`,
    `--regid=${daemon.gid}`,
    '--init-groups',
    '--',
    bwrap,
    ...bwrapArgs({ root: '/tmp', home: '/' }, [], tail),
  ];
  const r = await run(argv);
  if (r.spawnError) return `setpriv cannot be run (${r.spawnError}): run doctor as ${daemon.name} instead`;
  if (r.code === 0) return undefined;
  return `${bwrap} failed as ${daemon.name} (exit ${r.code}): ${r.err || 'no message'}`;
}
