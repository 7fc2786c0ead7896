/**
 * The output the result returns is text, and the cap is on that text as every door delivers
 * it: stdout and stderr together at most 2 MiB once written into a JSON string (the CLI's
 * envelope, the Platform API, MCP), in UTF-8. Decoding can grow bytes (each byte that is no
 * UTF-8 becomes U+FFFD, three bytes) and so can JSON (a NUL is `\u0000`, six bytes), so 2 MiB
 * of binary output would otherwise come back as 6 or 12 MiB. Each stream may take no more
 * of those bytes than it kept raw bytes once the total is over the cap, and a stream cut at
 * the cap loses the character the cut split.
 */

/** Where `buf` ends once a multi-byte sequence it ends inside is dropped. */
function wholeCharacters(buf: Buffer): Buffer {
  // A sequence is at most 4 bytes: its lead byte is among the last 4.
  for (let i = buf.length - 1; i >= 0 && i >= buf.length - 4; i--) {
    const b = buf[i]!;
    if ((b & 0xc0) === 0x80) continue; // continuation byte
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return i + need > buf.length ? buf.subarray(0, i) : buf;
  }
  return buf;
}

/** Control characters JSON writes with a two-byte escape (`\b \t \n \f \r`); the others take six. */
const SHORT_ESCAPE = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d]);

/** The bytes one code point takes inside a JSON string, in UTF-8. */
function jsonWidth(c: number): number {
  if (c < 0x20) return SHORT_ESCAPE.has(c) ? 2 : 6;
  if (c === 0x22 || c === 0x5c) return 2;
  return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
}

/** The bytes `text` takes inside a JSON string, in UTF-8 (the quotes not counted). */
export function jsonBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text)) - 2;
}

/** `text` cut to at most `max` bytes as a JSON string's content, on a character boundary. */
function withinJsonBytes(text: string, max: number): string {
  let used = 0;
  for (let i = 0; i < text.length; ) {
    const c = text.codePointAt(i)!;
    const w = jsonWidth(c);
    if (used + w > max) return text.slice(0, i);
    used += w;
    i += c > 0xffff ? 2 : 1;
  }
  return text;
}

/**
 * Decodes what the sandbox kept of stdout and stderr (`truncated`: the cap cut them).
 * @returns the two texts, together at most `cap` bytes in UTF-8, and whether anything was cut
 */
export function decodeOutput(
  stdout: Buffer,
  stderr: Buffer,
  truncated: boolean,
  cap: number,
): { stdout: string; stderr: string; truncated: boolean } {
  const raw = truncated ? [wholeCharacters(stdout), wholeCharacters(stderr)] : [stdout, stderr];
  const text = raw.map((b) => b.toString('utf8'));
  if (jsonBytes(text[0]!) + jsonBytes(text[1]!) <= cap)
    return { stdout: text[0]!, stderr: text[1]!, truncated };
  const cut = text.map((s, i) => withinJsonBytes(s, raw[i]!.length));
  return { stdout: cut[0]!, stderr: cut[1]!, truncated: true };
}
