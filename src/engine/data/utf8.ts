/**
 * Strict UTF-8 decoding for inputs that must be text. Node's 'utf8' decoding silently turns a bad
 * byte into U+FFFD, so a Latin-1 or binary file would be trained on (or sent to a model) garbled.
 */

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The text, or the 1-based line of the first invalid byte sequence. */
export function decodeUtf8(bytes: Uint8Array): { text: string } | { badLine: number } {
  try {
    return { text: strict.decode(bytes) };
  } catch {
    // A newline byte never occurs inside a multi-byte sequence, so lines can be checked one by one.
    let start = 0;
    let line = 1;
    for (;;) {
      const nl = bytes.indexOf(0x0a, start);
      const end = nl < 0 ? bytes.length : nl;
      try {
        strict.decode(bytes.subarray(start, end));
      } catch {
        return { badLine: line };
      }
      if (nl < 0) return { badLine: line };
      start = nl + 1;
      line++;
    }
  }
}
