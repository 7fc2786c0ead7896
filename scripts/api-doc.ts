/**
 * The API reference: TypeDoc renders one markdown page per entry point of the package into
 * docs/api/ (`npm run docs:api`). With `--check` it renders into a temporary directory and
 * fails when an export lacks a doc comment or a public signature names an unexported type
 * (typedoc.json turns those warnings into errors), or when docs/api/ differs from what the
 * sources produce. `npm run lint` runs the check.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const committed = join(root, 'docs/api');
const check = process.argv.includes('--check');
const out = check ? mkdtempSync(join(tmpdir(), 'clibroker-api-')) : committed;

function files(dir: string): Map<string, string> {
  const all = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else all.set(relative(dir, p), readFileSync(p, 'utf8'));
    }
  };
  try {
    walk(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  return all;
}

try {
  if (!check) rmSync(out, { recursive: true, force: true });
  try {
    execFileSync(join(root, 'node_modules/.bin/typedoc'), ['--logLevel', 'Warn', '--out', out], {
      cwd: root,
      stdio: 'inherit',
    });
  } catch {
    console.error('docs:api: TypeDoc failed (an export without a doc comment fails the build)');
    process.exit(1);
  }
  if (check) {
    const want = files(out);
    const have = files(committed);
    const stale = [...new Set([...want.keys(), ...have.keys()])].filter((f) => want.get(f) !== have.get(f));
    if (stale.length > 0) {
      console.error(`docs:api: docs/api/ is stale (${stale.join(', ')}); run npm run docs:api and commit it`);
      process.exit(1);
    }
  }
} finally {
  if (check) rmSync(out, { recursive: true, force: true });
}
