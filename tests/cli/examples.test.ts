import { execFileSync } from 'node:child_process';
import t from 'tap';
import { parseArgv } from '../../src/cli/argv.js';
import { BUNDLED_TOOLS } from '../../src/cli/commands/index.js';
import { commandPath } from '../../src/cli/define.js';
import { renderExample, shellQuote } from '../../src/cli/shell.js';
import type { AnyTool } from '../../src/cli/types.js';
import { TEST_TOOLS } from './fixtures/helpers.js';

/** The words bash makes of a command line: printf NUL-separates them, nothing is lost. */
function bashWords(line: string): string[] {
  const out = execFileSync('bash', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' });
  return out.split('\0').slice(0, -1);
}

const tools: AnyTool[] = [...TEST_TOOLS, ...BUNDLED_TOOLS];
const examples = tools.flatMap((def) => (def.examples ?? []).map((ex) => ({ def, ex })));

t.test('every rendered example round-trips through bash into the parser', async (t) => {
  t.plan(examples.length);
  for (const { def, ex } of examples) {
    const line = renderExample('clibroker', def, ex.params);
    const words = bashWords(line);
    const path = commandPath(def);
    const args = words.slice(1 + path.length);
    const want = Object.fromEntries(
      Object.entries(ex.params).filter(([k]) => !def.parameters[k]?.gadgetOnly),
    );
    t.same(parseArgv(def, args).values, want, line);
  }
});

t.test(
  'rendering: bare when safe, quoted only when needed, enums raw, arrays repeated, JSON single-quoted',
  async (t) => {
    const [review] = TEST_TOOLS;
    const line = renderExample('clibroker', review!, review!.examples![1]!.params);
    t.equal(
      line,
      `clibroker review submit --pr 7 --event REQUEST_CHANGES --body 'Please fix the tests; they don'\\''t run' --comments '[{"path":"src/a.ts","line":3,"body":"use \\"const\\" here"}]' --label needs work`.replace(
        '--label needs work',
        "--labels 'needs work' --labels bug --draft --offset -2",
      ),
    );
    t.equal(shellQuote('APPROVE'), 'APPROVE');
    t.equal(
      shellQuote('https://api.github.com/x?y=1'),
      "'https://api.github.com/x?y=1'",
      '? globs, so it is quoted',
    );
    t.equal(shellQuote(''), "''");
    t.equal(shellQuote('~root'), "'~root'");
  },
);
