/**
 * A long target reply is kept once in the run folder: whole in its `conversation.json` (what a
 * person opens), while its `results.jsonl` row names that file instead of repeating the text. Short
 * replies stay inline, so a row stays readable (and as the reference writes it) where copying costs
 * little. The engine reads rows back with the reply filled in, so nothing downstream changes.
 */
import { readFileSync } from 'node:fs';
import { relative, sep } from 'node:path';
import type { RolloutResult, RolloutRow } from '../../protocol/records';

/** Replies longer than this live only in their conversation file. */
export const INLINE_REPLY_CHARS = 2000;

/** The last assistant message of a conversation file's records: the reply that was scored. */
function lastAssistant(records: readonly unknown[]): string | undefined {
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i] as { role?: unknown; content?: unknown } | null;
    if (r && r.role === 'assistant' && typeof r.content === 'string') return r.content;
  }
  return undefined;
}

/**
 * The reference a result carries when its reply is long and the conversation just written at
 * `file` ends its assistant messages with exactly that reply; undefined otherwise (kept inline).
 */
export function replyReference(
  response: string,
  records: readonly unknown[],
  file: string,
  rolloutDir: string,
): Pick<RolloutResult, 'response_in' | 'response_chars'> | undefined {
  if (response.length <= INLINE_REPLY_CHARS || lastAssistant(records) !== response) return undefined;
  return { response_in: relative(rolloutDir, file).split(sep).join('/'), response_chars: response.length };
}

/** The row as written to `results.jsonl`: without the reply's text when its conversation holds it. */
export function rowToStore(result: RolloutResult): RolloutRow {
  if (result.response_in === undefined) return result;
  const { response: _kept, ...row } = result;
  return row;
}

/**
 * A row read back, with its reply from `conversationFile` when the row names one; undefined when
 * that file is missing, damaged or holds another reply (the item is then asked again).
 */
export function withReply(row: RolloutRow, conversationFile: string): RolloutResult | undefined {
  if (typeof row.response === 'string') return row as RolloutResult;
  if (row.response_in === undefined) return { ...row, response: '' };
  let records: unknown;
  try {
    records = JSON.parse(readFileSync(conversationFile, 'utf8'));
  } catch {
    return undefined;
  }
  const reply = Array.isArray(records) ? lastAssistant(records) : undefined;
  if (reply === undefined || reply.length !== row.response_chars) return undefined;
  return { ...row, response: reply };
}
