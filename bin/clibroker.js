#!/usr/bin/env node
// The `clibroker` binary (docs/cli.md). Its code is the package's one build (dist/commands/*.js
// and the chunks they share with the library), made by `npm run build` (or `npm run build:js`,
// which `npm test` runs first). `run` and `resume`, which an agent pays on every call, start on a
// fast path that loads only the daemon's client and hands the router (dist/commands/main.js's)
// whatever it does not take whole, before anything is sent (src/commands/fast-run.ts).
// CLIBROKER_NO_FAST_PATH=1 sends them to the router too.
const argv = process.argv.slice(2);
const fast = (argv[0] === 'run' || argv[0] === 'resume') && !process.env.CLIBROKER_NO_FAST_PATH;
const entry = fast ? 'fast-run.js' : 'main.js';
import(`../dist/commands/${entry}`)
  .then((m) => (fast ? m.fastRun(argv) : undefined))
  .catch((e) => {
    if (e?.code !== 'ERR_MODULE_NOT_FOUND' || !String(e.message).includes(entry)) throw e;
    process.stdout.write(
      `${JSON.stringify({ success: false, error: { type: 'runtime', message: 'clibroker is not built', hint: 'run npm run build:js' } })}\n`,
    );
    process.stderr.write('clibroker: runtime: clibroker is not built. run npm run build:js\n');
    process.exitCode = 1;
  });
