/**
 * Text a person reads before approving a request, with nothing hidden in it: every character
 * that draws nothing, or that moves what is drawn around it, is written out as an escape
 * (`\u202E`). One function for every place an approval is read — the review page, the
 * Platform API's approval objects, `clibroker approvals show|list` — so the rule cannot drift.
 * Pure, no imports.
 *
 * Escaped: controls (category Cc, U+0000–U+001F and U+007F–U+009F), format characters (Cf:
 * the bidi embeddings, overrides, isolates and marks U+202A–U+202E, U+2066–U+2069,
 * U+200E/U+200F, U+061C; the zero-width U+200B–U+200D, U+2060, U+FEFF; the tag characters,
 * and the rest), the line and paragraph separators (U+2028, U+2029), a lone surrogate, and
 * whatever else Unicode marks as ignorable by default (variation selectors, Hangul fillers).
 * A multi-line preview (a request body, stdin) keeps its line feeds and tabs; every other
 * field is one line, so they are escaped there too. A backslash is left as it is.
 */

/** What draws nothing or reorders its neighbours (`u` flag: astral characters are one match). */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu;

const hex = (n: number): string => n.toString(16).toUpperCase().padStart(4, '0');

/** `\u202E`, or `\u{E0041}` past the Basic Multilingual Plane. */
export function escapeChar(ch: string): string {
  const cp = ch.codePointAt(0)!;
  return cp > 0xffff ? `\\u{${hex(cp)}}` : `\\u${hex(cp)}`;
}

/**
 * `text` with its invisible and reordering characters written as escapes. `multiline` keeps
 * `\n` and `\t` (a body or stdin preview); a carriage return is escaped even there, as it can
 * return a terminal to the start of the line and overwrite what was shown.
 */
export function showInvisible(text: string, opts: { multiline?: boolean } = {}): string {
  return text.replace(HIDDEN, (ch) => (opts.multiline && (ch === '\n' || ch === '\t') ? ch : escapeChar(ch)));
}
