/**
 * What `clibroker doctor` takes and answers. Every problem has a catalogue code: a
 * deployment one (DEPLOY_*), or a configuration one (CONFIG_*) found loading it as the daemon
 * would; none ever holds a secret or a part of one.
 */
import type { WithheldTool } from '../config/types.js';

/** One thing wrong with the deployment. */
export interface DoctorProblem {
  code: string;
  /** a file or directory, or a configuration path (`daemon.executorToken`) */
  path: string;
  message: string;
}

export interface DoctorOptions {
  /** the configuration file, as the daemon is started with it */
  config: string;
  /** the daemon's user, by name or uid (as root only; default the configuration file's owner) */
  user?: string;
  /** where the variables of `{env}` secrets are read when doctor runs as the daemon's user; default process.env */
  env?: Record<string, string | undefined>;
  /** tests: the bubblewrap the sandbox probe runs (default /usr/bin/bwrap) */
  bwrap?: string;
}

/** The daemon's user as doctor resolved it. */
export interface DaemonUser {
  name: string;
  uid: number;
  gid: number;
  /** every group it is in, its own included */
  gids: number[];
}

/** Something doctor could not check, and why. */
export interface NotChecked {
  what: string;
  why: string;
}

export interface DoctorReport {
  problems: DoctorProblem[];
  /** undefined when no daemon user could be resolved */
  daemonUser?: { name: string; uid: number };
  /** `daemon-user` when doctor ran as the daemon's user, `root` when as root for it */
  ranAs: 'root' | 'daemon-user';
  /** what was looked at: counts of files by kind, the socket, the sandbox probe, the tokens */
  checked: {
    config: string;
    secrets: number;
    besideSecrets: number;
    manifests: number;
    store: string | undefined;
    socket: string | undefined;
    isolatedImages: number;
    tokens: number;
    sandbox: 'usable' | 'unusable' | 'not needed';
  };
  notChecked: NotChecked[];
  /**
   * The CLIs the configuration installs but would not offer, each with its reason code: a
   * problem of that CLI alone (CONFIG_CLI_NOT_RUNNABLE, CONFIG_TOOL_NAME_CONFLICT, …) withholds
   * it and the deployment still serves the rest, so it is reported here, not as a problem.
   */
  withheld: WithheldTool[];
}
