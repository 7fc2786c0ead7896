/**
 * `clibroker doctor --config <file> [--user <name>]`: the operator's check of a live
 * deployment, run as the daemon's user or as root. It looks at the deployment the way an
 * attacker with a shell as an agent user would — who can read or replace the configuration,
 * the secrets, the manifests and the store, what the sandbox would show, who can swap the
 * socket, whether bubblewrap runs, how guessable the tokens are — and loads the configuration
 * as the daemon would. Never offered to agents (`PERSON_ONLY_TOOLS`): it reads the
 * configuration. The back-end (src/doctor) loads only when it runs.
 */
import { defineTool } from '../cli/define.js';

export const doctor = defineTool({
  name: 'doctor',
  description: [
    "Check a deployment as an agent user's shell would see it, and load its configuration as clibroker daemon would (the operator's command; run it as the daemon's user, or as root with --user).",
    "Fails (exit 1, error.code DEPLOYMENT_UNSAFE) with every problem in error.details.problems, each {code, path, message}: DEPLOY_FILE_EXPOSED, DEPLOY_DIR_EXPOSED, DEPLOY_SANDBOX_SHOWS, DEPLOY_SOCKET_DIR_UNSAFE, DEPLOY_SANDBOX_UNAVAILABLE, DEPLOY_DAEMON_USER, CONFIG_SECRET_WEAK and the loader's CONFIG_* problems. Never shows a secret.",
    'A CLI the configuration installs but would not offer (a problem of that CLI alone) is not a problem of the deployment: it is listed in withheld with its code.',
    'Run it after every change to the configuration, its files or the service.',
  ].join('\n'),
  parameters: {
    config: {
      type: 'string',
      describe: 'the configuration file the daemon is started with (JSON; docs/config.md)',
    },
    user: {
      type: 'string',
      optional: true,
      describe:
        "as root: the daemon's user, by name or uid (default the configuration file's owner); as another user it must be that user",
    },
  },
  examples: [
    {
      params: { config: '/etc/clibroker/config.json', user: 'clibroker' },
      comment: 'as root, for the daemon that runs as clibroker',
      output: {
        healthy: true,
        daemonUser: { name: 'clibroker', uid: 998 },
        ranAs: 'root',
        checked: { secrets: 2, manifests: 3, sandbox: 'usable', tokens: 1 },
        notChecked: [],
        withheld: [],
      },
    },
    {
      params: { config: '/etc/clibroker/config.json' },
      comment: "as the daemon's user, with its environment (sudo -u clibroker …)",
    },
  ],
  outputShape:
    "{healthy: true, daemonUser: {name, uid}, ranAs: 'root'|'daemon-user', checked: {config, secrets, besideSecrets, manifests, store, socket, isolatedImages, tokens, sandbox}, notChecked: {what, why}[], withheld: {id, name, code, message, path?}[]}; unsafe: exit 1, error.code DEPLOYMENT_UNSAFE, error.details {count, problems: {code, path, message}[], notChecked}",
  async run(p) {
    const { runDoctor } = await import('../doctor/index.js');
    const { fitProblems } = await import('../config/validate.js');
    const { brokerError } = await import('../errors.js');
    const r = await runDoctor({ config: p.config, ...(p.user !== undefined ? { user: p.user } : {}) });
    if (r.problems.length > 0)
      throw brokerError(
        'DEPLOYMENT_UNSAFE',
        { problems: r.problems, shown: 3 },
        {
          details: fitProblems(r.problems, {
            ...(r.daemonUser ? { daemonUser: r.daemonUser } : {}),
            notChecked: r.notChecked.slice(0, 8),
          }),
        },
      );
    const { daemonUser, ranAs, checked, notChecked, withheld } = r;
    return { healthy: true as const, daemonUser, ranAs, checked, notChecked, withheld };
  },
});
