/**
 * One operator configuration fixture on disk: the seed-shaped extensions (github gh,
 * azure az, atlassian curl) as manifest files, their secrets in an environment variable
 * and two 0600 files, and three pinned images, all isolated (the configuration has a daemon
 * block, and a daemon refuses plain images). `real: false` (the default) pins small
 * scripts in per-image 0755 directories, so a test may chmod, chown or rewrite them;
 * `real: true` pins /usr/bin/gh, /usr/bin/az and /usr/bin/curl.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExtensionManifest } from '../../src/manifest/index.js';
import { atlassianExtension, azExtension, ghExtension } from '../manifest/fixtures.js';

export const sha256Of = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

// biome-ignore lint/suspicious/noExplicitAny: a test mutates the configuration freely, wrong types included
export type Json = any;

export interface Fixture {
  dir: string;
  /** the configuration as JSON, for a test to mutate before `write()` */
  config: Json;
  env: Record<string, string | undefined>;
  /** every secret value the fixture holds: none may appear in an error */
  secrets: { gh: string; jira: string; az: string; executor: string };
  /** write `config` to config.json and return its path */
  write(): string;
  /** write a manifest file for an extension and pin it in the configuration */
  putManifest(key: string, m: ExtensionManifest | string): void;
  /** the executable path of an image (temporary ones live in their own directory) */
  exe(image: string): string;
}

const SCRIPT = (name: string) => `#!/bin/sh\necho ${name}\n`;

export function makeFixture(t: { teardown(fn: () => void): void }, opts: { real?: boolean } = {}): Fixture {
  const dir = mkdtempSync(join(tmpdir(), 'clibroker-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const secrets = {
    gh: `ghp_${randomBytes(18).toString('hex')}`,
    jira: `jira-${randomBytes(12).toString('hex')}`,
    az: `az~${randomBytes(16).toString('base64url')}`,
    executor: `exec-${randomBytes(16).toString('hex')}`,
  };
  const secret = (name: string, value: string) => {
    writeFileSync(join(dir, name), `${value}\n`, { mode: 0o600 });
  };
  secret('jira.secret', secrets.jira);
  secret('az.secret', secrets.az);
  secret('executor.token', secrets.executor);

  const exes: Record<string, string> = {};
  for (const [image, name] of [
    ['gh', 'gh'],
    ['azure-cli', 'az'],
    ['base', 'curl'],
  ] as const) {
    if (opts.real) {
      exes[image] = `/usr/bin/${name}`;
      continue;
    }
    const d = join(dir, `img-${image}`);
    mkdirSync(d, { mode: 0o755 });
    chmodSync(d, 0o755);
    exes[image] = join(d, name);
    writeFileSync(exes[image]!, SCRIPT(name), { mode: 0o755 });
    chmodSync(exes[image]!, 0o755);
  }

  const config: Json = {
    $schema: '../schemas/config.schema.json',
    version: 1,
    // the conformance gate has its own tests; these are about something else
    conformance: 'optional',
    organization: { ceiling: 'write' },
    images: Object.fromEntries(
      Object.entries(exes).map(([image, p]) => [
        image,
        {
          executable: p,
          sha256: sha256Of(readFileSync(p)),
          profile: 'isolated',
        },
      ]),
    ),
    extensions: {},
    store: 'store.db',
    deadlineSeconds: 120,
    daemon: {
      socket: join(dir, 'daemon.sock'),
      socketMode: '0660',
      executorToken: { file: 'executor.token' },
    },
    upstream: { connectTo: { 'api.github.com': '127.0.0.1:8443' }, allowAddresses: ['127.0.0.0/8'] },
  };

  const f: Fixture = {
    dir,
    config,
    env: { GH_SECRET: secrets.gh, PATH: process.env['PATH'] },
    secrets,
    write() {
      const p = join(dir, 'config.json');
      writeFileSync(p, JSON.stringify(config, null, 2));
      return p;
    },
    putManifest(key, m) {
      const text = typeof m === 'string' ? m : JSON.stringify(m, null, 2);
      writeFileSync(join(dir, `${key}.manifest.json`), text);
      config.extensions[key] ??= {};
      config.extensions[key].manifest = `${key}.manifest.json`;
      config.extensions[key].sha256 = sha256Of(text);
    },
    exe: (image) => exes[image]!,
  };

  // entrypoints: the pinned path for the real binaries, the file name for the scripts
  const entry = (m: ExtensionManifest, image: string): ExtensionManifest => {
    for (const c of m.clis)
      c.binary.entrypoint = opts.real ? exes[image]! : (exes[image]!.split('/').pop() as string);
    return m;
  };
  f.putManifest('github', entry(ghExtension(), 'gh'));
  f.putManifest('azure', entry(azExtension(), 'azure-cli'));
  f.putManifest('atlassian', entry(atlassianExtension(), 'base'));
  Object.assign(config.extensions.github, {
    connection: { kind: 'oauth_access_token', accessToken: { env: 'GH_SECRET' } },
    endpoint: 'https://ghe.acme.example',
  });
  Object.assign(config.extensions.azure, {
    connection: {
      kind: 'oauth_client_credentials',
      clientId: '00000000-0000-4000-8000-000000000001',
      tenantId: 'acme-tenant',
      tokenUrl: 'https://login.microsoftonline.com/acme-tenant/oauth2/v2.0/token',
      clientSecret: { file: 'az.secret' },
    },
  });
  Object.assign(config.extensions.atlassian, {
    connection: { kind: 'basic', username: 'bot@acme.example', password: { file: 'jira.secret' } },
  });
  return f;
}

/** Await `p` and return the BrokerError it rejects with (or fail loudly). */
export async function rejection(
  p: Promise<unknown>,
): Promise<{ code: string; message: string; details?: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    return e as { code: string; message: string; details?: Record<string, unknown> };
  }
  throw new Error('expected a rejection');
}
