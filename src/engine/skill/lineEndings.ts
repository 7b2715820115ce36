/**
 * Skill files saved with Windows line endings (CRLF, as Git for Windows checks them out): the
 * optimizer writes its anchors and new text with `\n`, so a multi-line anchor would never match and
 * an insertion would mix line endings into the file. Edits are applied to the text with `\n` and
 * the result is given back with the file's own line endings.
 */

/** True when every line break of `text` is CRLF (and there is at least one). */
export function usesCrlf(text: string): boolean {
  const crlf = text.split('\r\n').length - 1;
  return crlf > 0 && crlf === text.split('\n').length - 1;
}

/**
 * `change` applied to `text` with its line breaks as `\n`, the result with CRLF again when `text`
 * used CRLF throughout. A file with mixed or `\n` line endings is changed as it is.
 */
export function withLfLineEndings<T extends { text: string }>(text: string, change: (lf: string) => T): T {
  if (!usesCrlf(text)) return change(text);
  const out = change(text.replace(/\r\n/g, '\n'));
  return { ...out, text: out.text.replace(/\r?\n/g, '\r\n') };
}
