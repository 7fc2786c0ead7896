import { execFileSync } from 'node:child_process';
import t from 'tap';
import { parseArgv } from '../../src/cli/argv.js';
import { BUNDLED_TOOLS } from '../../src/commands/index.js';
import { commandPath } from '../../src/cli/define.js';
import { renderExample, shellQuote } from '../../src/cli/shell.js';
import type { AnyTool } from '../../src/cli/types.js';
import { TEST_TOOLS } from './fixtures/helpers.js';

/**
 * The words bash makes of a command line, and what it feeds the command's stdin (a heredoc):
 * `clibroker` is a function that NUL-separates its words, then copies its stdin.
 */
function bashRun(line: string): { words: string[]; stdin: string } {
  const out = execFileSync(
    'bash',
    ['-c', `clibroker() { printf '%s\\0' clibroker "$@"; printf '\\1'; cat; }\n${line}`],
    { encoding: 'utf8', input: '' },
  );
  const cut = out.indexOf('\u0001');
  return { words: out.slice(0, cut).split('\0').slice(0, -1), stdin: out.slice(cut + 1) };
}

const tools: AnyTool[] = [...TEST_TOOLS, ...BUNDLED_TOOLS];
const examples = tools.flatMap((def) => (def.examples ?? []).map((ex) => ({ def, ex })));

t.test('every rendered example round-trips through bash into the parser', async (t) => {
  t.plan(examples.length);
  for (const { def, ex } of examples) {
    const line = renderExample('clibroker', def, ex.params);
    const { words, stdin } = bashRun(line);
    const path = commandPath(def);
    const args = words.slice(1 + path.length);
    const want = Object.fromEntries(
      Object.entries(ex.params).filter(([k]) => !def.parameters[k]?.gadgetOnly),
    );
    const parsed = parseArgv(def, args);
    // a heredoc example reads its parameter from stdin, through the -file flag
    for (const f of parsed.files)
      if (f.path === '-') parsed.values[f.param] = f.parseAs === 'json' ? JSON.parse(stdin) : stdin;
    t.same(parsed.values, want, line);
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
