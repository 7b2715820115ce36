/**
 * A task's `conversation.json` as a person reads it: the task, the target's reply and the score,
 * each under a heading. Every text comes from the task file or a model, so it is shown verbatim in
 * a code fence (never rendered as Markdown, links or HTML). Pure, for tests.
 */
import type { RolloutRow } from '../../protocol/records';

const headings: Record<string, string> = {
  user: 'Task',
  assistant: 'Target reply',
};

/** A fence longer than any backtick run in `text`, so the text cannot close it. */
function fenced(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}text\n${text}\n${fence}`;
}

function headingOf(role: string, content: string): string {
  if (role === 'system') {
    if (content.startsWith('[EVALUATION RESULT]')) return 'Score';
    if (content.startsWith('[TARGET ERROR]')) return 'Target error (not scored)';
    if (content.startsWith('[AGENT RUN]')) return 'What the agent did';
    return 'System';
  }
  return headings[role] ?? role;
}

export function conversationMarkdown(taskId: string, records: unknown): string {
  const out = [`# Task ${taskId.replace(/[\\`*_[\]<>#]/g, (c) => `\\${c}`)}`, ''];
  if (!Array.isArray(records)) {
    out.push('This file is not a conversation (a list of messages).');
    return out.join('\n');
  }
  for (const r of records) {
    if (typeof r !== 'object' || r === null) continue;
    // A chat target's function call (OfficeQA's document tools), in the reference's shape.
    const call = r as { type?: unknown; turn?: unknown; cmd?: unknown; obs?: unknown };
    if (call.type === 'tool_call' && typeof call.cmd === 'string') {
      const turn = typeof call.turn === 'number' ? ` (turn ${call.turn})` : '';
      out.push(
        `## Tool call${turn}`,
        '',
        fenced(call.cmd),
        '',
        '### Tool result',
        '',
        fenced(typeof call.obs === 'string' ? call.obs : JSON.stringify(call.obs ?? '')),
        '',
      );
      continue;
    }
    const { role, content } = r as { role?: unknown; content?: unknown };
    if (typeof role !== 'string' || typeof content !== 'string') continue;
    out.push(`## ${headingOf(role, content)}`, '', fenced(content), '');
  }
  return out.join('\n');
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A failing task as a picker row: its id, the question, and what was answered against what was expected. */
export function failingTaskItem(
  id: string,
  row: RolloutRow | undefined,
): { label: string; description?: string; detail?: string } {
  if (!row) return { label: id };
  const answered =
    row.outcome === 'errored'
      ? `not answered (${row.error_kind ?? 'error'})`
      : `answered "${oneLine(row.predicted_answer, 60)}"`;
  return {
    label: id,
    description: oneLine(row.task_description, 90),
    detail: `${answered}, expected ${oneLine(JSON.stringify(row.expected), 60)}`,
  };
}
