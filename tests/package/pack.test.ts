/**
 * The package as published: `npm pack` from a clean copy of the repository (no dist/) must
 * build through `prepare` and ship the library, the binary, the schema, the help trees,
 * the docs and the license; no tests, no sources, and no source map naming a file the tarball
 * lacks. The tarball is the one the install tests use (tests/helpers/packed.ts), read here as
 * extracted, so what is checked is what ships.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { packedTarball } from '../helpers/packed.js';

t.test('npm pack from a clean copy builds and ships what an adopter needs', async (t) => {
  const packed = await packedTarball();
  const files = new Set(packed.files);
  const dir = mkdtempSync(join(tmpdir(), 'clibroker-pack-read-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await promisify(execFile)('tar', ['-xzf', packed.tarball, '-C', dir, '--strip-components=1']);

  for (const f of [
    'package.json',
    'README.md',
    'LICENSE',
    'CHANGELOG.md',
    'SECURITY.md',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/errors.js',
    'dist/policy/index.js',
    'dist/cli/index.js',
    'bin/clibroker.js',
    'dist/commands/main.js',
    'dist/commands/fast-run.js',
    'dist/THIRD-PARTY-NOTICES.md',
    'schemas/config.schema.json',
    'schemas/openapi.json',
    'help-trees/gh.json',
    'docs/config.md',
  ]) {
    t.ok(files.has(f), `ships ${f}`);
  }
  t.same(
    [...files].filter((f) => /^(src|tests|bench|scripts)\//.test(f)),
    [],
    'no sources, tests, benchmarks or scripts',
  );

  // Every module ships once: the JavaScript is the entries (the library's and the binary's) and
  // the chunks they share, never a compiled tree beside a bundle.
  const entries = new Set([
    'index',
    'errors',
    'policy/index',
    'cli/index',
    'testing/index',
    'commands/main',
    'commands/fast-run',
  ]);
  t.same(
    [...files].filter(
      (f) =>
        f.endsWith('.js') &&
        f.startsWith('dist/') &&
        !entries.has(f.slice(5, -3)) &&
        !f.startsWith('dist/chunks/'),
    ),
    [],
    'no JavaScript in dist/ but the entries and their shared chunks',
  );
  t.notOk(
    [...files].some((f) => f.startsWith('dist/bundle/')),
    'no second copy of the binary',
  );

  // Every export target in package.json is in the tarball.
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    exports: Record<string, string | Record<string, string>>;
  };
  for (const target of Object.values(manifest.exports).flatMap((e) =>
    typeof e === 'string' ? [e] : Object.values(e),
  )) {
    t.ok(files.has(posix.normalize(target)), `export target ${target} is shipped`);
  }

  // A source map is only useful if what it names is shipped.
  for (const map of [...files].filter((f) => f.endsWith('.map'))) {
    const { sources = [] } = JSON.parse(readFileSync(join(dir, map), 'utf8')) as { sources?: string[] };
    for (const s of sources)
      t.ok(files.has(posix.join(dirname(map), s)), `${map} names ${s}, which is shipped`);
  }

  // Docs link each other relatively: every relative link of a shipped doc resolves in the tarball.
  // One assertion per file linked to, however many docs link it.
  const linkedFrom = new Map<string, string[]>();
  for (const doc of [...files].filter((f) => f.endsWith('.md'))) {
    const text = readFileSync(join(dir, doc), 'utf8');
    for (const [, href = ''] of text.matchAll(/\]\(([^)#\s]+\.md)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/i.test(href)) continue;
      const target = posix.join(dirname(doc), href);
      const from = linkedFrom.get(target) ?? [];
      if (!from.includes(doc)) linkedFrom.set(target, [...from, doc]);
    }
  }
  for (const [target, from] of linkedFrom)
    t.ok(
      files.has(target),
      `${target} is shipped (linked from ${from.length === 1 ? from[0] : `${from.length} shipped docs`})`,
      { from },
    );
});
