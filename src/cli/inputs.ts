/**
 * Reads `--<param>-file` payloads. The one-stdin rule is checked on the whole invocation
 * before any file or stdin is touched: two `-` consumers are a flag-parse error naming both
 * flags, and `-` while stdin is a terminal fails at once instead of waiting for input that
 * an agent can never type.
 */
import type { FileRef } from './argv.js';
import { flagName } from './define.js';
import { echo, fail } from './envelope.js';
import { diagnoseJson } from './json-diagnose.js';
import { parseJsonParam } from './json-param.js';
import type { AnyTool } from './types.js';

/** What the CLI needs from its process; tests pass their own. */
export interface CliIo {
  /** Writes to standard output. */
  stdout(text: string): void;
  /** Writes to standard error. */
  stderr(text: string): void;
  /** true when stdin is a terminal: reading it would wait for a person */
  readonly stdinIsTTY: boolean;
  /** Reads all of standard input. */
  readStdin(): Promise<string>;
  /** Reads a file as UTF-8. */
  readFile(path: string): Promise<string>;
}

/** Fail fast on the stdin rule; reads nothing. */
export function checkStdin(files: readonly FileRef[], stdinIsTTY: boolean): void {
  const readers = files.filter((f) => f.path === '-');
  if (readers.length > 1) {
    fail(
      'flag-parse',
      `only one flag may read stdin, but ${readers.map((f) => `--${f.flag} -`).join(' and ')} both do`,
      {
        flag: readers.map((f) => f.flag).join(','),
        hint: `write one payload to a file and pass its path, e.g. --${readers[0]!.flag} payload.json`,
      },
    );
  }
  const r = readers[0];
  if (r && stdinIsTTY) {
    fail('flag-parse', `--${r.flag} - reads stdin, but stdin is a terminal`, {
      flag: r.flag,
      hint: `pipe the payload in (… | clibroker …) or pass a file path to --${r.flag}`,
    });
  }
}

// What a path never looks like but a payload does: an agent passed the content itself.
const CONTENT_RE = /^\s*[[{"]|\s/;

/**
 * Check the stdin rule, then read every file into its parameter. `argv` is the command's
 * own words, for the corrected command a failure offers (the direct flag with the content).
 * Returns the text each file held, by parameter name (a command may hash what it read).
 * @throws CliFailure flag-parse (unreadable file, stdin rule), json-parse
 */
export async function resolveFiles(
  def: AnyTool,
  files: readonly FileRef[],
  values: Record<string, unknown>,
  io: CliIo,
  argv: readonly string[] = [],
): Promise<Record<string, string>> {
  checkStdin(files, io.stdinIsTTY);
  const texts: Record<string, string> = {};
  for (const f of files) {
    // the direct flag with `content`, in place of this file flag and its path
    const direct = (content: string): string[] => [
      ...argv.slice(0, f.at),
      `--${flagName(f.param)}`,
      content,
      ...argv.slice(f.at + f.words),
    ];
    let text: string;
    try {
      text = f.path === '-' ? await io.readStdin() : await io.readFile(f.path);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const content = code === 'ENOENT' && CONTENT_RE.test(f.path);
      let fix: string[] | undefined;
      if (content) {
        if (f.parseAs === 'text') fix = direct(f.path);
        else {
          try {
            fix = direct(JSON.stringify(JSON.parse(f.path)));
          } catch {
            const repaired = diagnoseJson(f.path)?.repaired;
            if (repaired) fix = direct(repaired);
          }
        }
      }
      fail(
        'flag-parse',
        `cannot read --${f.flag} ${content ? '(its value looks like the content itself, not a path)' : echo(f.path, 100)}: ${code ?? 'unreadable'}`,
        {
          flag: f.flag,
          got: f.path,
          hint: content
            ? `--${f.flag} takes a path; the content itself goes in --${flagName(f.param)}${fix ? ' (retry does that)' : ''}`
            : 'pass a readable file path, or - to read stdin',
          ...(fix ? { fix } : {}),
        },
      );
    }
    values[f.param] =
      f.parseAs === 'json' ? parseJsonParam(def, f.param, f.flag, text, (json) => direct(json)) : text;
    texts[f.param] = text;
  }
  return texts;
}
