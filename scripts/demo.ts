/**
 * `npm run demo`: the main job, printed for a person. The logic lives in src/demo so
 * `clibroker demo` runs exactly the same flow.
 */
import { runDemo } from '../src/demo/index.js';

const report = await runDemo({ log: (line) => console.log(line) });
if (!report.ok) process.exitCode = 1;
