/**
 * What the differential tests of our HTTP parsers against node's own (llhttp) share: the
 * parser binding, the byte mutator, and the list of deliberate extra refusals docs/parsing.md
 * keeps for each of its "stricter than llhttp" tables.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface LlParser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(b: Buffer): number | (Error & { code?: string });
  /** end of input: completes a body read to the end of the connection, or returns an error */
  finish(): undefined | (Error & { code?: string });
  [k: number]: unknown;
}
interface HttpCommon {
  HTTPParser: {
    new (): LlParser;
    REQUEST: number;
    RESPONSE: number;
    kLenientNone: number;
    kOnHeaders: number;
    kOnHeadersComplete: number;
    kOnBody: number;
    kOnMessageComplete: number;
  };
  methods: string[];
}
// node's internal parser binding, as node's own http server and client drive it (no deprecation warning)
export const { HTTPParser, methods: LL_METHODS } = createRequire(import.meta.url)(
  '_http_common',
) as HttpCommon;

const DOC = resolve(dirname(fileURLToPath(import.meta.url)), '../../docs/parsing.md');

/** Reasons docs/parsing.md lists in the section titled `title`: the table's first column. */
export function documentedExtraReasons(title: string): Set<string> {
  const text = readFileSync(DOC, 'utf8');
  const section = text.split(/^#+ /m).find((s) => s.startsWith(title));
  if (!section) throw new Error(`docs/parsing.md has no "${title}" section`);
  return new Set([...section.matchAll(/^\| `([a-z0-9-]+)` \|/gm)].map((m) => m[1]!));
}

export function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

/** Bytes a mutation draws from: line ends, whitespace, separators and controls. */
export const INTERESTING = [
  '\r',
  '\n',
  ' ',
  '\t',
  '\0',
  '\x7f',
  '\x80',
  '\xff',
  ':',
  ',',
  '"',
  '\\',
  '#',
  '\x01',
  '\x0b',
];

/** `count` random insertions, deletions or replacements of bytes drawn from `alphabet`. */
export function mutateBytes(
  r: () => number,
  bytes: number[],
  count: number,
  alphabet: readonly string[],
): void {
  for (let k = 0; k < count; k++) {
    const at = Math.floor(r() * (bytes.length + 1));
    const b = pick(r, alphabet).charCodeAt(0);
    const op = Math.floor(r() * 3);
    if (op === 0) bytes.splice(at, 0, b);
    else if (op === 1) bytes.splice(at, 1);
    else bytes[Math.min(at, bytes.length - 1)] = b;
  }
}
