#!/usr/bin/env node
// The bundled agent-facing CLI (docs/cli.md). The code lives in one esbuild bundle so a cold
// `clibroker --help` parses a single file; `npm run build:cli` (run by `npm test` and
// `npm run build`) produces it.
import('../dist/bundle/clibroker.mjs').catch((e) => {
  if (e?.code !== 'ERR_MODULE_NOT_FOUND' || !String(e.message).includes('clibroker.mjs')) throw e;
  process.stdout.write(
    `${JSON.stringify({ success: false, error: { type: 'runtime', message: 'clibroker is not built', hint: 'run npm run build:cli' } })}\n`,
  );
  process.stderr.write('clibroker: runtime: clibroker is not built. run npm run build:cli\n');
  process.exitCode = 1;
});
