/**
 * Builds the package's JavaScript: the library's entry points and the `clibroker` binary's
 * (src/commands/main.ts, and src/commands/fast-run.ts for `run` and `resume`) in one esbuild pass into dist/, with what they share in dist/chunks. So
 * every module ships once, whichever entry loads it, and a cold `clibroker --help` or
 * `clibroker run` parses a handful of files, not the hundred modules of a compiled tree.
 * tsc writes only the declarations (tsconfig.build.json).
 *
 * Identifiers are kept (whitespace and syntax minified only), so a host's stack traces name
 * our functions. The package's dependencies (pino, undici, zod) and the store drivers, which
 * are optional peers a host installs when it uses them (better-sqlite3, pg), stay imports.
 * The MCP SDK is inlined, the parts serve uses: its 90-odd packages never reach a host's
 * install. Its licence, and those of what it brings, go to dist/THIRD-PARTY-NOTICES.md.
 *
 * The chunks directory is emptied first: chunk names carry a content hash, and stale chunks
 * would otherwise pile up and be packed.
 *
 *   npm run build        # declarations, then this
 *   npm run build:js     # this alone (npm test runs it first)
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type BuildOptions, build, type Metafile } from 'esbuild';

const root = resolve(import.meta.dirname, '..');

/** The package's entry points (package.json exports and bin), by their path under dist/. */
export const ENTRIES: Readonly<Record<string, string>> = {
  index: 'src/index.ts',
  errors: 'src/errors.ts',
  'policy/index': 'src/policy/index.ts',
  'cli/index': 'src/cli/index.ts',
  'testing/index': 'src/testing/index.ts',
  'commands/main': 'src/commands/main.ts',
  // `run` and `resume` without the router (bin/clibroker.js picks it for them)
  'commands/fast-run': 'src/commands/fast-run.ts',
};

/** Resolved at run time from the host's node_modules, never inlined. */
export const EXTERNAL = ['pino', 'undici', 'zod', 'better-sqlite3', 'pg', 'pg-native'] as const;

/**
 * The build's options for some of the entries and an output directory: the package's build
 * below and the tests' builds of the binary use them, so what the tests spawn is built as the
 * package ships.
 */
export function buildOptions(
  entries: Readonly<Record<string, string>>,
  outdir: string,
): BuildOptions & { metafile: true } {
  return {
    absWorkingDir: root,
    entryPoints: { ...entries },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    splitting: true,
    minifyWhitespace: true,
    minifySyntax: true,
    external: [...EXTERNAL],
    outdir,
    chunkNames: 'chunks/[name]-[hash]',
    metafile: true,
    logLevel: 'warning',
  };
}

/** The package directory a bundled input comes from (`node_modules/@scope/name/…`), if any. */
function packageDir(input: string): string | undefined {
  return /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1];
}

/** Writes the licence of every package the build inlines to THIRD-PARTY-NOTICES.md. */
function writeNotices(metafile: Metafile, outdir: string): void {
  const dirs = [...new Set(Object.keys(metafile.inputs).map(packageDir))]
    .filter((d): d is string => d !== undefined)
    .sort();
  const sections = dirs.map((dir) => {
    const pkg = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
      license?: string;
    };
    const file = readdirSync(join(root, dir)).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    const text = file !== undefined ? readFileSync(join(root, dir, file), 'utf8').trim() : undefined;
    if (text === undefined && pkg.license === undefined)
      throw new Error(`${pkg.name}: no licence file and no licence field; cannot inline it`);
    return [`## ${pkg.name} ${pkg.version} (${pkg.license ?? 'see text'})`, '', text ?? '', ''].join('\n');
  });
  writeFileSync(
    join(outdir, 'THIRD-PARTY-NOTICES.md'),
    [
      '# Third-party code inlined in clibroker',
      '',
      'The JavaScript in this directory carries the following packages (the parts clibroker uses), under their own licences.',
      '',
      ...sections,
    ].join('\n'),
  );
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === import.meta.filename) {
  const outdir = join(root, 'dist');
  // the declarations tsc wrote stay; the chunks (and a bundle an older build left) go
  for (const stale of ['chunks', 'bundle']) rmSync(join(outdir, stale), { recursive: true, force: true });
  const result = await build(buildOptions(ENTRIES, outdir));
  writeNotices(result.metafile, outdir);
  for (const entry of Object.keys(ENTRIES))
    if (!existsSync(join(outdir, `${entry}.js`))) throw new Error(`dist/${entry}.js was not written`);
}
