/**
 * Importing clibroker loads none of the packages it uses for one job only: zod (validation),
 * pino (createLogger), undici (the dispatcher a broker lends its host, token minting), pg
 * and better-sqlite3 (stores) and the MCP SDK (serve). Each is loaded by the first call that
 * needs it: a broker's own requests need none of them, and its dispatcher loads only the parts
 * of undici it uses, not undici's main entry. Checked in a fresh node process per case, by the
 * CommonJS module cache those packages land in.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HEAVY = ['zod', 'pino', 'undici', 'pg', 'better-sqlite3', '@modelcontextprotocol/sdk'];

/** The package files loaded after running `body` (an ESM snippet) in a fresh process. */
async function loadedAfter(body: string): Promise<string[]> {
  const script = `${body}
const { createRequire } = await import('node:module');
const cache = Object.keys(createRequire(import.meta.url).cache);
process.stdout.write(JSON.stringify(cache.filter((f) => f.includes('/node_modules/'))));`;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
  });
  return JSON.parse(stdout) as string[];
}

const packagesIn = (files: string[]): string[] =>
  HEAVY.filter((p) => files.some((f) => f.includes(`/node_modules/${p}/`)));

t.test('importing the root, the policy and the errors loads none of them', async (t) => {
  for (const entry of ['src/index.ts', 'src/policy/index.ts', 'src/errors.ts', 'src/cli/index.ts']) {
    const files = await loadedAfter(`await import(${JSON.stringify(`./${entry}`)});`);
    t.same(packagesIn(files), [], entry);
  }
});

t.test('each is loaded by its first use', async (t) => {
  const wellFormed = await loadedAfter(
    `const m = await import('./src/index.ts');
m.parseExtensionManifest({ id: 'x', egress: ['api.example.com'], clis: [] });`,
  );
  t.same(packagesIn(wellFormed), [], 'a well-formed manifest is validated without zod');
  const malformed = await loadedAfter(
    `const m = await import('./src/index.ts');
try { m.parseExtensionManifest({ id: 'X', egress: 'api.example.com', clis: [] }); } catch {}`,
  );
  t.same(packagesIn(malformed), ['zod'], 'a malformed one loads zod only, to say what is wrong');

  const logged = await loadedAfter(
    `const m = await import('./src/index.ts'); m.createLogger({ level: 'silent' });`,
  );
  t.same(packagesIn(logged), ['pino'], 'createLogger loads pino only');

  const brokered = await loadedAfter(
    `const m = await import('./src/index.ts'); const b = await m.createBroker({}); await b.close();`,
  );
  t.same(packagesIn(brokered), [], 'a broker loads none of them');
  const lent = await loadedAfter(
    `const m = await import('./src/index.ts'); const b = await m.createBroker({}); b.dispatcher; await b.close();`,
  );
  t.same(packagesIn(lent), ['undici'], "reading the broker's dispatcher loads undici only");
  t.notOk(
    lent.some((f) => f.endsWith('/node_modules/undici/index.js')),
    "and not undici's main entry",
  );
});
