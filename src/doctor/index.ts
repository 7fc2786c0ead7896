/**
 * `clibroker doctor`: the live deployment as an attacker with a shell as an agent user would
 * look at it. `runDoctor` returns every problem found (never throws for one); the command
 * turns a non-empty list into DEPLOYMENT_UNSAFE.
 *
 *   the daemon's user → the configuration loaded as the daemon loads it (CONFIG_* problems,
 *     the CLIs it withholds)
 *     → owners and modes of every file and directory → what the sandbox would show
 *     → the socket's directory → bubblewrap as the daemon's user → the tokens' strength
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { checkConfigFile } from '../config/validate.js';
import { readDeployment } from './deployment.js';
import { checkFiles } from './files.js';
import { sandboxProbe, sandboxShows } from './sandbox.js';
import { checkSocketDir } from './socket.js';
import { tokenWeakness } from '../config/token-strength.js';
import type { DoctorOptions, DoctorProblem, DoctorReport, NotChecked } from './types.js';
import { resolveDaemonUser } from './users.js';

export type { DoctorOptions, DoctorProblem, DoctorReport } from './types.js';
export { tokenBits, tokenWeakness } from '../config/token-strength.js';

/** A stand-in for a variable only the daemon's environment holds (doctor run as root). */
const PLACEHOLDER = 'set-in-the-daemon-environment-not-checked-by-doctor';

const LINE_BREAK = /\r?\n$/;

/** Check the deployment `opts.config` describes, for the daemon's user. */
export async function runDoctor(opts: DoctorOptions): Promise<DoctorReport> {
  const config = resolve(opts.config);
  const asRoot = (process.getuid?.() ?? 0) === 0;
  const problems: DoctorProblem[] = [];
  const notChecked: NotChecked[] = [];
  const d = await readDeployment(config);
  let loaded: Awaited<ReturnType<typeof checkConfigFile>> | undefined;
  const report = (extra: Partial<DoctorReport> = {}): DoctorReport => ({
    problems,
    ranAs: asRoot ? 'root' : 'daemon-user',
    checked: {
      config,
      secrets: d?.secrets.filter((s) => 'file' in s).length ?? 0,
      besideSecrets: 0,
      manifests: d?.manifests.length ?? 0,
      store: d?.store,
      socket: d?.socket,
      isolatedImages: d?.images.filter((i) => i.profile === 'isolated').length ?? 0,
      tokens: 0,
      sandbox: 'not needed',
    },
    notChecked,
    withheld: [...(loaded?.loaded?.withheld ?? [])],
    ...extra,
  });

  // the daemon's user
  const who = await resolveDaemonUser(config, opts.user);
  problems.push(...who.problems);
  const daemon = who.user;
  if (!daemon) return report();
  if (daemon.uid === 0)
    problems.push({
      code: 'DEPLOY_DAEMON_USER',
      path: '(user)',
      message:
        'the daemon would run as root: a sandbox escape or a bug would own the host, and every file check below is moot; run it as its own user (User=clibroker)',
    });
  const forOther = asRoot && daemon.uid !== 0;

  // the configuration, loaded as the daemon loads it
  const env: Record<string, string | undefined> = { ...(opts.env ?? process.env) };
  const envSecrets = d?.secrets.flatMap((s) => ('env' in s ? [s] : [])) ?? [];
  if (forOther) {
    // root's environment is not the daemon's: those variables are assumed set, and said so
    for (const s of envSecrets) env[s.env] = PLACEHOLDER;
    for (const s of envSecrets)
      notChecked.push({
        what: s.at,
        why: `the variable ${s.env} is the daemon's environment: whether it is set${d?.tokens.includes(s) ? ' and strong' : ''} is checked only when doctor runs as ${daemon.name} with that environment`,
      });
  }
  loaded = await checkConfigFile(config, { for: d?.socket ? 'daemon' : 'serve', env });
  // the socket's directory is checked below for the daemon's user (validate trusts this process's)
  problems.push(
    ...loaded.problems.filter((p) => !(p.path === 'daemon.socket' && p.code === 'DEPLOY_SOCKET_DIR_UNSAFE')),
  );
  if (!d) return report({ daemonUser: { name: daemon.name, uid: daemon.uid } });

  // owners and modes
  let passwd = '';
  try {
    passwd = await readFile('/etc/passwd', 'utf8');
  } catch {
    notChecked.push({ what: '/etc/passwd', why: 'unreadable: group members by primary group are not seen' });
  }
  const files = await checkFiles(d, daemon, passwd, forOther);
  problems.push(...files.problems);

  // what the sandbox would show
  problems.push(...(await sandboxShows(d, files.beside)));

  // the socket's directory
  if (d.socket) {
    const s = await checkSocketDir(d.socket, daemon);
    problems.push(...s.problems);
    notChecked.push(...s.notChecked);
  }

  // bubblewrap as the daemon's user
  let sandbox: DoctorReport['checked']['sandbox'] = 'not needed';
  if (d.images.some((i) => i.profile === 'isolated')) {
    const why = await sandboxProbe(daemon, opts.bwrap);
    sandbox = why === undefined ? 'usable' : 'unusable';
    if (why !== undefined)
      problems.push({
        code: 'DEPLOY_SANDBOX_UNAVAILABLE',
        path: opts.bwrap ?? '/usr/bin/bwrap',
        message: `the isolated profile cannot run as ${daemon.name}, so the daemon would withhold every CLI: ${why}`,
      });
  }

  // the tokens' strength
  let tokens = 0;
  for (const t of d.tokens) {
    let value: string | undefined;
    if ('env' in t) value = forOther ? undefined : env[t.env];
    else value = await readFile(t.file, 'utf8').catch(() => undefined);
    if (value === undefined || value === '') continue; // missing: the loader's problem, or not ours to read
    tokens++;
    const weak = tokenWeakness(value.replace(LINE_BREAK, ''));
    // the configuration's load refuses a weak token too: one problem, not two
    const said = problems.some((p) => p.code === 'CONFIG_SECRET_WEAK' && p.path === t.at);
    if (weak && !said)
      problems.push({
        code: 'CONFIG_SECRET_WEAK',
        path: t.at,
        message: `the token of ${t.at} is weak: ${weak}; generate one with openssl rand -hex 32`,
      });
  }

  const r = report({ daemonUser: { name: daemon.name, uid: daemon.uid } });
  r.checked.besideSecrets = files.beside.length;
  r.checked.tokens = tokens;
  r.checked.sandbox = sandbox;
  return r;
}
