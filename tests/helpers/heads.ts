/**
 * What the unit tests of the two head parsers (requests and responses) share: feeding a head
 * in pieces, checking that every way of splitting it gives the same result, and checking that
 * each refusal reason is earned by its head and named in docs/parsing.md.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';

export const PARSING_DOC = readFileSync(
  resolve(dirname(fileURLToPath(import.meta.url)), '../../docs/parsing.md'),
  'utf8',
);

/** The results both parsers give, in the shape these helpers read. */
export type AnyHeadResult =
  | { kind: 'more' }
  | { kind: 'head'; bodyOffset: number }
  | { kind: 'refused'; reason: string };

export function reasonOf(r: AnyHeadResult): string {
  return r.kind === 'refused' ? r.reason : r.kind;
}

/** The result of feeding `pieces` in turn to `parser`, with the body offset counted from the first piece. */
export function feedPieces<R extends AnyHeadResult>(parser: { push(b: Buffer): R }, pieces: Buffer[]): R {
  let before = 0;
  for (const piece of pieces) {
    const r = parser.push(piece);
    if (r.kind === 'head') return { ...r, bodyOffset: before + r.bodyOffset };
    if (r.kind !== 'more') return r;
    before += piece.length;
  }
  return { kind: 'more' } as R;
}

/** Byte by byte and every split in two give what the head in one piece gives (`fresh`: a new parser). */
export function splitsAgree<R extends AnyHeadResult>(
  t: Test,
  fresh: () => { push(b: Buffer): R },
  text: string,
): void {
  const whole = Buffer.from(text, 'latin1');
  const one = feedPieces(fresh(), [whole]);
  const bytes = feedPieces(
    fresh(),
    [...whole].map((b) => Buffer.from([b])),
  );
  t.same(bytes, one, `byte by byte: ${JSON.stringify(text.slice(0, 40))}`);
  let bad = 0;
  for (let i = 1; i < whole.length; i++) {
    const two = feedPieces(fresh(), [whole.subarray(0, i), whole.subarray(i)]);
    if (JSON.stringify(two) !== JSON.stringify(one)) bad++;
  }
  t.equal(bad, 0, `every 2-way split: ${JSON.stringify(text.slice(0, 40))}`);
}

/** Each reason's head (text, or text and options) earns that reason, and docs/parsing.md names it. */
export function refusalsEarned<O>(
  t: Test,
  cases: Record<string, string | [string, O]>,
  parse: (b: Buffer, opts?: O) => AnyHeadResult,
): void {
  for (const [reason, c] of Object.entries(cases)) {
    const [text, opts] = typeof c === 'string' ? [c, undefined] : c;
    t.equal(reasonOf(parse(Buffer.from(text, 'latin1'), opts)), reason, reason);
    t.match(PARSING_DOC, `\`${reason}\``, `${reason} is in docs/parsing.md`);
  }
}
