/**
 * Builds the clibroker binary's bundle (dist/bundle): src/cli/main.ts and everything it
 * reaches in one minified ESM entry, with the back-ends each command loads on first use in
 * chunks beside it, so a cold `clibroker --help` or `clibroker run` parses one file.
 *
 * What the binary needs and the library leaves to its host is inlined: the MCP SDK (for
 * `clibroker serve`) and pg (for a PostgreSQL store), so `npx clibroker serve` needs nothing
 * installed beside the package. The package's own dependencies (pino, undici, zod) stay
 * imports, resolved from the package's node_modules, and so does better-sqlite3: native code
 * cannot be bundled, so the embedded SQLite store needs it installed. The licence of every
 * inlined package is written to dist/bundle/THIRD-PARTY-NOTICES.md.
 *
 * The directory is emptied first: chunk names carry a content hash, and stale chunks would
 * otherwise pile up and be packed.
 *
 *   npm run build:cli
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type BuildOptions, build, type Metafile } from 'esbuild';

const root = resolve(import.meta.dirname, '..');

/** Resolved at run time from the package's node_modules, never inlined. */
export const BUNDLE_EXTERNAL = ['pino', 'undici', 'zod', 'better-sqlite3', 'pg-native'] as const;

/**
 * The bundle's options for an entry and an output directory: the build below and the tests'
 * builds of the binary both use them, so what the tests spawn is built as the package ships.
 */
export function bundleOptions(entry: string, outdir: string): BuildOptions & { metafile: true } {
  return {
    absWorkingDir: root,
    entryPoints: { clibroker: entry },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    splitting: true,
    minify: true,
    external: [...BUNDLE_EXTERNAL],
    outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    metafile: true,
    logLevel: 'warning',
    // pg is CommonJS and requires Node's built-ins: an ESM bundle has no `require` of its own
    banner: {
      js: "import { createRequire as __cliRequire } from 'node:module'; const require = __cliRequire(import.meta.url);",
    },
  };
}

/** The package directory a bundled input comes from (`node_modules/@scope/name/…`), if any. */
function packageDir(input: string): string | undefined {
  return /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1];
}

/** Writes the licence of every package the bundle inlines to THIRD-PARTY-NOTICES.md. */
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
      '# Third-party code inlined in the clibroker binary',
      '',
      'The bundle in this directory carries the following packages (the parts the binary uses), under their own licences.',
      '',
      ...sections,
    ].join('\n'),
  );
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === import.meta.filename) {
  const outdir = join(root, 'dist/bundle');
  rmSync(outdir, { recursive: true, force: true });
  const result = await build(bundleOptions('src/cli/main.ts', outdir));
  writeNotices(result.metafile, outdir);
  if (!existsSync(join(outdir, 'clibroker.mjs'))) throw new Error('the bundle was not written');
}
