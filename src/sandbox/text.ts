/**
 * The output the result returns is text, and the cap is on that text: stdout and stderr
 * together at most 2 MiB in UTF-8. Decoding can grow bytes (each byte that is no UTF-8
 * becomes U+FFFD, three bytes), so 2 MiB of binary output would otherwise come back as
 * 6 MiB. Each stream may take no more UTF-8 bytes than it kept raw bytes once the total is
 * over the cap, and a stream cut at the cap loses the character the cut split.
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

/** `text` cut to at most `max` bytes of UTF-8, on a character boundary. */
function withinBytes(text: string, max: number): string {
  const enc = Buffer.from(text, 'utf8');
  if (enc.length <= max) return text;
  let end = max;
  while (end > 0 && (enc[end]! & 0xc0) === 0x80) end--;
  return enc.subarray(0, end).toString('utf8');
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
  if (Buffer.byteLength(text[0]!) + Buffer.byteLength(text[1]!) <= cap)
    return { stdout: text[0]!, stderr: text[1]!, truncated };
  const cut = text.map((s, i) => withinBytes(s, raw[i]!.length));
  return { stdout: cut[0]!, stderr: cut[1]!, truncated: true };
}
