#!/usr/bin/env node
// The `clibroker` binary (docs/cli.md). Its code is the package's one build (dist/commands/main.js
// and the chunks it shares with the library), made by `npm run build` (or `npm run build:js`,
// which `npm test` runs first).
import('../dist/commands/main.js').catch((e) => {
  if (e?.code !== 'ERR_MODULE_NOT_FOUND' || !String(e.message).includes('main.js')) throw e;
  process.stdout.write(
    `${JSON.stringify({ success: false, error: { type: 'runtime', message: 'clibroker is not built', hint: 'run npm run build:js' } })}\n`,
  );
  process.stderr.write('clibroker: runtime: clibroker is not built. run npm run build:js\n');
  process.exitCode = 1;
});
