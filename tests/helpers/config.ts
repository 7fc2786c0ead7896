/**
 * Real operator configurations for tests: a temp directory holding the manifests (their
 * sha256 computed from the bytes written), secret files at 0600, the store, the mock
 * vendor's CA, and `config.json`. Executables are pinned with their real sha256.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OperatorConfig } from '../../src/config/types.js';
import type { ExtensionManifest } from '../../src/manifest/types.js';

export function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

export interface ConfigDir {
  dir: string;
  /** the config.json written by `write` */
  file: string;
  /** writes a manifest file and returns {manifest: path, sha256} */
  manifest(ext: ExtensionManifest): { manifest: string; sha256: string };
  /** writes a 0600 secret file and returns its reference */
  secret(name: string, value: string): { file: string };
  /** a pinned image for an executable */
  image(
    executable: string,
    profile?: 'isolated' | 'plain',
  ): { executable: string; sha256: string; profile: 'isolated' | 'plain' };
  /** routes every host to a mock vendor: connectTo, its CA written to a file, loopback allowed */
  upstream(
    vendor: { port: number; caPem: string },
    hosts: readonly string[],
  ): NonNullable<OperatorConfig['upstream']>;
  write(config: OperatorConfig): string;
  remove(): void;
}

export function configDir(prefix = 'clibroker-cfg-'): ConfigDir {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    dir,
    file: join(dir, 'config.json'),
    manifest(ext) {
      const path = join(dir, `${ext.id}.manifest.json`);
      writeFileSync(path, `${JSON.stringify(ext, null, 2)}\n`);
      return { manifest: path, sha256: sha256File(path) };
    },
    secret(name, value) {
      const path = join(dir, `${name}.secret`);
      writeFileSync(path, value, { mode: 0o600 });
      return { file: path };
    },
    image(executable, profile = 'isolated') {
      return { executable, sha256: sha256File(executable), profile };
    },
    upstream(vendor, hosts) {
      const caFile = join(dir, 'vendor-ca.pem');
      writeFileSync(caFile, vendor.caPem);
      return {
        connectTo: Object.fromEntries(hosts.map((h) => [h, `127.0.0.1:${vendor.port}`])),
        caFile,
        allowAddresses: ['127.0.0.0/8'],
      };
    },
    write(config) {
      writeFileSync(join(dir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
      return join(dir, 'config.json');
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
