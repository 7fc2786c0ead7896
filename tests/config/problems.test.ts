/**
 * One named case per configuration problem: each changes an otherwise valid configuration
 * (real files in a temporary directory, real chmod and chown) so that exactly one problem
 * remains, and asserts its code and path. A problem of one CLI refuses the load under
 * `strict` and withholds that CLI otherwise. Then every case at once: all are listed. No
 * message ever holds a secret.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config/index.js';
import type { ConfigProblem } from '../../src/config/index.js';
import { atlassianExtension, ghExtension } from '../manifest/fixtures.js';
import { type Fixture, type Json, makeFixture, rejection } from './fixtures.js';

type Case = {
  mutate: (f: Fixture) => void;
  code: string;
  path: string;
  /** what the message must say (the reference, the reason) */
  says?: RegExp;
  /** changes something other cases also change: left out of the all-at-once run */
  solo?: boolean;
  /** a problem of this CLI alone: refused under strict, else the CLI is withheld and the rest loads */
  withholds?: string;
  /** a problem only under strict: without it the configuration loads whole */
  strictOnly?: boolean;
};

const ext = (f: Fixture, key: string): Json => f.config.extensions[key];
const gh = (m = ghExtension()) => {
  m.clis[0]!.binary.entrypoint = 'gh';
  return m;
};

const cases: Record<string, Case> = {
  'an unknown field (a typo)': {
    mutate: (f) => {
      ext(f, 'github').endpiont = 'ghe.acme.example';
    },
    code: 'CONFIG_FIELD_UNKNOWN',
    path: 'extensions.github.endpiont',
  },
  'a field of the wrong type': {
    mutate: (f) => {
      f.config.organization.ceiling = 'admin';
    },
    code: 'CONFIG_FIELD_INVALID',
    path: 'organization.ceiling',
  },
  'a secret written inline where a reference belongs': {
    mutate: (f) => {
      ext(f, 'github').connection.accessToken = f.secrets.gh;
    },
    code: 'CONFIG_SECRET_INLINE',
    path: 'extensions.github.connection.accessToken',
    says: /\{"env": "NAME"\} or \{"file": "PATH"\}/,
  },
  'an executor token written inline': {
    mutate: (f) => {
      f.config.daemon.executorToken = f.secrets.executor;
    },
    code: 'CONFIG_SECRET_INLINE',
    path: 'daemon.executorToken',
  },
  'a secret variable that is not set': {
    mutate: (f) => {
      delete f.env['GH_SECRET'];
    },
    code: 'CONFIG_SECRET_MISSING',
    path: 'extensions.github.connection.accessToken',
    says: /environment variable GH_SECRET is not set/,
    solo: true,
  },
  'a secret variable that is empty': {
    mutate: (f) => {
      f.env['GH_SECRET'] = '';
    },
    code: 'CONFIG_SECRET_MISSING',
    path: 'extensions.github.connection.accessToken',
    says: /GH_SECRET is empty/,
    solo: true,
  },
  'a secret file that does not exist': {
    mutate: (f) => {
      rmSync(join(f.dir, 'jira.secret'));
    },
    code: 'CONFIG_SECRET_MISSING',
    path: 'extensions.atlassian.connection.password',
    says: /jira\.secret does not exist/,
  },
  'a secret file readable by its group': {
    mutate: (f) => {
      chmodSync(join(f.dir, 'az.secret'), 0o640);
    },
    code: 'CONFIG_SECRET_FILE_MODE',
    path: 'extensions.azure.connection.clientSecret',
    says: /mode 0640/,
  },
  'a manifest file that does not exist': {
    mutate: (f) => {
      rmSync(join(f.dir, 'atlassian.manifest.json'));
    },
    code: 'CONFIG_MANIFEST_UNREADABLE',
    path: 'extensions.atlassian.manifest',
    says: /ENOENT/,
    solo: true,
  },
  'a manifest file that is not JSON': {
    mutate: (f) => {
      f.putManifest('atlassian', '{"id": "atlassian",');
    },
    code: 'CONFIG_MANIFEST_UNREADABLE',
    path: 'extensions.atlassian.manifest',
    says: /not UTF-8 JSON/,
    solo: true,
  },
  'a manifest that is not the reviewed release': {
    mutate: (f) => {
      ext(f, 'azure').sha256 = '0'.repeat(64);
    },
    code: 'CONFIG_MANIFEST_HASH_MISMATCH',
    path: 'extensions.azure.sha256',
    says: /has sha256 [0-9a-f]{64}, not the pinned one/,
  },
  'a manifest that fails manifest validation': {
    mutate: (f) => {
      const m = gh();
      m.clis[0]!.env = { PATH: '/tmp/evil' };
      f.putManifest('github', m);
    },
    code: 'CONFIG_MANIFEST_INVALID',
    path: 'extensions.github.manifest.clis[0].env.PATH',
    says: /^MANIFEST_ENV_NAME_RESERVED: /,
    solo: true,
  },
  "a key that is not the manifest's id": {
    mutate: (f) => {
      f.config.extensions.jira = f.config.extensions.atlassian;
      delete f.config.extensions.atlassian;
    },
    code: 'CONFIG_EXTENSION_ID_MISMATCH',
    path: 'extensions.jira',
    says: /install it under the key "atlassian"/,
    solo: true,
  },
  'a CLI whose image is not pinned': {
    mutate: (f) => {
      delete f.config.images['azure-cli'];
    },
    code: 'CONFIG_IMAGE_UNKNOWN',
    path: 'extensions.azure.manifest.clis[0].binary.image',
    withholds: 'azure:cli:az',
    says: /image "azure-cli"/,
  },
  'an image executable given as a relative path': {
    mutate: (f) => {
      f.config.images.gh.executable = 'bin/gh';
    },
    code: 'CONFIG_IMAGE_UNPINNED',
    path: 'images.gh.executable',
    solo: true,
  },
  'an image executable that is a directory': {
    mutate: (f) => {
      const d = join(f.dir, 'img-gh', 'dir', 'gh');
      mkdirSync(d, { mode: 0o755, recursive: true });
      f.config.images.gh.executable = d;
    },
    code: 'CONFIG_IMAGE_UNPINNED',
    path: 'images.gh.executable',
    says: /not a regular file/,
    solo: true,
  },
  'an image executable that is a symbolic link': {
    mutate: (f) => {
      mkdirSync(join(f.dir, 'img-gh', 'link'), { mode: 0o755 });
      const l = join(f.dir, 'img-gh', 'link', 'gh');
      symlinkSync(f.exe('gh'), l);
      f.config.images.gh.executable = l;
    },
    code: 'CONFIG_IMAGE_UNPINNED',
    path: 'images.gh.executable',
    says: /symbolic link/,
    solo: true,
  },
  'a malformed sha256': {
    mutate: (f) => {
      f.config.images.base.sha256 = f.config.images.base.sha256.toUpperCase();
    },
    code: 'CONFIG_IMAGE_UNPINNED',
    path: 'images.base.sha256',
    solo: true,
  },
  'an executable that does not have the pinned sha256': {
    mutate: (f) => {
      writeFileSync(f.exe('base'), '#!/bin/sh\necho replaced\n');
    },
    code: 'CONFIG_IMAGE_HASH_MISMATCH',
    path: 'images.base.sha256',
    says: /review this binary/,
  },
  'an executable writable by its group': {
    mutate: (f) => {
      chmodSync(f.exe('gh'), 0o775);
    },
    code: 'CONFIG_IMAGE_WRITABLE',
    path: 'images.gh.executable',
    says: /mode 0775/,
    solo: true,
  },
  'an executable whose directory others may write': {
    mutate: (f) => {
      chmodSync(join(f.dir, 'img-azure-cli'), 0o777);
    },
    code: 'CONFIG_IMAGE_WRITABLE',
    path: 'images["azure-cli"].executable',
    says: /directory .*img-azure-cli has mode 0777/,
    solo: true,
  },
  'an executable owned by another user': {
    mutate: (f) => {
      chownSync(f.exe('gh'), 65534, 65534);
    },
    code: 'CONFIG_IMAGE_WRITABLE',
    path: 'images.gh.executable',
    says: /owned by uid 65534/,
    solo: true,
  },
  'an entrypoint that is not the pinned program': {
    mutate: (f) => {
      const m = atlassianExtension();
      m.clis[0]!.binary.entrypoint = '/usr/local/bin/curl';
      f.putManifest('atlassian', m);
    },
    code: 'CONFIG_IMAGE_ENTRYPOINT_MISMATCH',
    path: 'extensions.atlassian.manifest.clis[0].binary.entrypoint',
    withholds: 'atlassian:cli:curl',
    solo: true,
  },
  'an endpoint on another port': {
    mutate: (f) => {
      ext(f, 'github').endpoint = 'https://ghe.acme.example:8443';
    },
    code: 'CONFIG_ENDPOINT_INVALID',
    path: 'extensions.github.endpoint',
    solo: true,
  },
  'an endpoint in upper case': {
    mutate: (f) => {
      ext(f, 'github').endpoint = 'GHE.acme.example';
    },
    code: 'CONFIG_ENDPOINT_INVALID',
    path: 'extensions.github.endpoint',
    solo: true,
  },
  'two CLIs offered under one tool name': {
    mutate: (f) => {
      const m = atlassianExtension();
      m.id = 'confluence';
      m.clis[0]!.binary.entrypoint = 'curl';
      f.putManifest('confluence', m);
      ext(f, 'confluence').connection = { kind: 'basic', username: 'bot', password: { env: 'GH_SECRET' } };
    },
    code: 'CONFIG_TOOL_NAME_CONFLICT',
    path: 'extensions.confluence.manifest.clis[0].id',
    says: /curl_cli is already offered by atlassian:cli:curl/,
    // without strict both are offered under qualified names (load.test.ts)
    strictOnly: true,
  },
  'a deadline over 270 seconds': {
    mutate: (f) => {
      f.config.deadlineSeconds = 271;
    },
    code: 'CONFIG_FIELD_INVALID',
    path: 'deadlineSeconds',
  },
  'a relative daemon socket': {
    mutate: (f) => {
      f.config.daemon.socket = 'daemon.sock';
    },
    code: 'CONFIG_FIELD_INVALID',
    path: 'daemon.socket',
  },
  'a socket mode that lets every user connect': {
    mutate: (f) => {
      f.config.daemon.socketMode = '0662';
    },
    code: 'CONFIG_FIELD_INVALID',
    path: 'daemon.socketMode',
  },
  'a plain image in a configuration the daemon serves': {
    mutate: (f) => {
      f.config.images.base.profile = 'plain';
    },
    code: 'CONFIG_IMAGE_PLAIN_UNDER_DAEMON',
    path: 'images.base.profile',
    says: /would read its secrets/,
  },
  'a connectTo value that is not ip:port': {
    mutate: (f) => {
      f.config.upstream.connectTo['api.github.com'] = 'localhost:8443';
    },
    code: 'CONFIG_FIELD_INVALID',
    path: 'upstream.connectTo["api.github.com"]',
  },
  'a caFile that cannot be read': {
    mutate: (f) => {
      f.config.upstream.caFile = 'missing-ca.pem';
    },
    code: 'CONFIG_FIELD_INVALID',
    path: 'upstream.caFile',
    says: /missing-ca\.pem \(ENOENT\)/,
  },
  'an allowed address that is not a range': {
    mutate: (f) => {
      f.config.upstream.allowAddresses = ['127.0.0.1/8'];
    },
    code: 'CONFIG_FIELD_INVALID',
    path: 'upstream.allowAddresses[0]',
    says: /write "127\.0\.0\.0\/8"/,
  },
  'a token URL that is not strict https': {
    mutate: (f) => {
      ext(f, 'azure').connection.tokenUrl = 'https://evil.example\\@login.microsoftonline.com/t/token';
    },
    code: 'CONFIG_FIELD_INVALID',
    path: 'extensions.azure.connection.tokenUrl',
    solo: true,
  },
  'an empty scope list': {
    mutate: (f) => {
      ext(f, 'azure').connection.scopes = [];
    },
    code: 'CONFIG_FIELD_INVALID',
    path: 'extensions.azure.connection.scopes',
    solo: true,
  },
  'an unknown connection kind': {
    mutate: (f) => {
      ext(f, 'atlassian').connection.kind = 'password';
    },
    code: 'CONFIG_FIELD_INVALID',
    path: 'extensions.atlassian.connection.kind',
    solo: true,
  },
  'a CLI with scopes and a connection that is not an application identity': {
    mutate: (f) => {
      ext(f, 'azure').connection = { kind: 'api_key', apiKey: { env: 'GH_SECRET' } };
    },
    code: 'CONFIG_CLI_NOT_RUNNABLE',
    path: 'extensions.azure.manifest.clis[0]',
    withholds: 'azure:cli:az',
    says: /IDENTITY_NOT_CONFIGURED/,
    solo: true,
  },
  'a CLI with several egress hosts, no credentialHosts and no endpoint': {
    mutate: (f) => {
      delete ext(f, 'github').endpoint;
    },
    code: 'CONFIG_CLI_NOT_RUNNABLE',
    path: 'extensions.github.manifest.clis[0]',
    withholds: 'github:cli:gh',
    says: /TOOL_VENDOR_CLI_CREDENTIAL_HOSTS_REQUIRED/,
    solo: true,
  },
};

const noSecret = (t: Test, f: Fixture, e: unknown) => {
  const text = JSON.stringify(e) + String((e as Error).message);
  for (const [name, s] of Object.entries(f.secrets))
    t.notOk(text.includes(s), `the ${name} secret appears nowhere in the error`);
};

t.test('each problem alone', async (t) => {
  t.plan(Object.keys(cases).length);
  for (const [name, c] of Object.entries(cases)) {
    await t.test(name, async (t) => {
      const f = makeFixture(t);
      c.mutate(f);
      if (c.withholds !== undefined || c.strictOnly) {
        const loaded = await loadConfig(f.write(), { env: f.env });
        t.same(
          loaded.withheld.map((w) => [w.id, w.code, w.path]),
          c.withholds === undefined ? [] : [[c.withholds, c.code, c.path]],
          'not strict: loaded, only that CLI withheld',
        );
        t.notOk(
          loaded.tools.some((x) => x.id === c.withholds),
          'and not offered',
        );
        f.config.strict = true;
      }
      const e = await rejection(loadConfig(f.write(), { env: f.env }));
      t.equal(e.code, 'CONFIG_INVALID');
      const problems = (e.details?.['problems'] ?? []) as ConfigProblem[];
      t.same(
        problems.map((p) => `${p.code} ${p.path}`),
        [`${c.code} ${c.path}`],
        'exactly this problem',
      );
      if (c.says) t.match(problems[0]?.message, c.says);
      t.match(
        e.message,
        new RegExp(`^CONFIG_INVALID: the configuration .* was refused with 1 problem: ${c.code} at `),
      );
      noSecret(t, f, e);
    });
  }
});

t.test('every problem at once: all are listed, none hides another', async (t) => {
  const f = makeFixture(t);
  const together = Object.entries(cases).filter(([, c]) => !c.solo);
  for (const [, c] of together) c.mutate(f);
  f.config.strict = true;
  const e = await rejection(loadConfig(f.write(), { env: f.env }));
  const got = ((e.details?.['problems'] ?? []) as ConfigProblem[]).map((p) => `${p.code} ${p.path}`);
  t.same(got.sort(), together.map(([, c]) => `${c.code} ${c.path}`).sort());
  t.match(e.message, new RegExp(`with ${together.length} problems: .*; and ${together.length - 3} more\\.`));
  noSecret(t, f, e);
});

t.test('a configuration file that is not JSON is refused without quoting it', async (t) => {
  const f = makeFixture(t);
  const p = join(f.dir, 'broken.json');
  writeFileSync(p, `{"daemon": {"executorToken": "${f.secrets.executor}" }`);
  const e = await rejection(loadConfig(p, { env: f.env }));
  t.equal(e.code, 'CONFIG_INVALID');
  t.match(e.details, {
    problems: [{ code: 'CONFIG_FIELD_INVALID', path: '(root)', message: /is not JSON/ }],
  });
  noSecret(t, f, e);
  const missing = await rejection(loadConfig(join(f.dir, 'nope.json')));
  t.match(missing.details, {
    problems: [{ code: 'CONFIG_FIELD_INVALID', path: '(root)', message: /ENOENT/ }],
  });
});

t.test('a reference whose name is the secret itself is not echoed', async (t) => {
  const f = makeFixture(t);
  ext(f, 'github').connection.accessToken = { env: f.secrets.gh };
  const e = await rejection(loadConfig(f.write(), { env: f.env }));
  t.match(e.details, {
    problems: [
      {
        code: 'CONFIG_SECRET_MISSING',
        path: 'extensions.github.connection.accessToken',
        message: /name looks like a secret/,
      },
    ],
  });
  noSecret(t, f, e);
});

t.test("a malformed field does not hide its siblings' problems", async (t) => {
  const f = makeFixture(t);
  f.config.images.gh.profil = 'isolated';
  chmodSync(f.exe('gh'), 0o777);
  ext(f, 'azure').identity = 'someone';
  ext(f, 'azure').sha256 = 'f'.repeat(64);
  ext(f, 'atlassian').assignment = 42;
  ext(f, 'atlassian').connection = { kind: 'api_key', apiKey: { env: 'GH_SECRET' } };
  const e = await rejection(loadConfig(f.write(), { env: f.env }));
  const got = ((e.details?.['problems'] ?? []) as ConfigProblem[]).map((p) => `${p.code} ${p.path}`);
  t.same(
    got.sort(),
    [
      'CONFIG_FIELD_UNKNOWN images.gh.profil',
      'CONFIG_IMAGE_WRITABLE images.gh.executable',
      'CONFIG_FIELD_INVALID extensions.azure.identity',
      'CONFIG_MANIFEST_HASH_MISMATCH extensions.azure.sha256',
      'CONFIG_FIELD_INVALID extensions.atlassian.assignment',
    ].sort(),
  );
});

t.test('a key that looks like a secret is not repeated in the path', async (t) => {
  const f = makeFixture(t);
  f.config.daemon[f.secrets.gh] = true;
  const e = await rejection(loadConfig(f.write(), { env: f.env }));
  t.match(e.details, {
    problems: [{ code: 'CONFIG_FIELD_UNKNOWN', path: /^daemon\["\(a key that looks like a secret\)"\]$/ }],
  });
  noSecret(t, f, e);
});

t.test('a FIFO in place of a secret file is refused at once, not waited on', async (t) => {
  const f = makeFixture(t);
  const fifo = join(f.dir, 'jira.secret');
  rmSync(fifo);
  execFileSync('mkfifo', ['-m', '600', fifo]);
  const e = await rejection(loadConfig(f.write(), { env: f.env }));
  t.match(e.details, {
    problems: [
      {
        code: 'CONFIG_SECRET_MISSING',
        path: 'extensions.atlassian.connection.password',
        message: /not a regular file/,
      },
    ],
  });
});
