/** Our prompt text for the judge model that grades natural-language expectations (scoring/judge.ts). */

export const JUDGE_SYSTEM = [
  'You check one reply of an AI assistant against a numbered list of expectations that its author wrote for the task.',
  'Grade every expectation on its own, from what the reply shows: it passes only when the reply clearly meets it;',
  'when the reply does not show it (or only claims it without doing it), it fails. Judge substance, not wording or tone.',
  'Reply with exactly one JSON object and nothing around it:',
  '{"grades": [{"index": 1, "passed": true, "evidence": "<one sentence: what in the reply shows it, or what is missing>"}]}',
  'with one entry per expectation, in the order given, indexed from 1.',
].join('\n');

export function judgeUserMessage(
  task: string,
  reply: { text: string; activity?: string },
  expectations: readonly string[],
  files: readonly string[],
): string {
  const parts = [`## Task\n${task.trim()}`];
  if (files.length)
    parts.push(`## Input files given with the task\n${files.map((f) => `- ${f}`).join('\n')}`);
  parts.push(`## Reply\n${reply.text.trim() || '(empty reply)'}`);
  // An agent's final message rarely says everything it did; its event stream does.
  if (reply.activity) parts.push(`## What the agent did (from its event stream)\n${reply.activity.trim()}`);
  parts.push(
    `## Expectations (${expectations.length})\n${expectations.map((e, i) => `${i + 1}. ${e}`).join('\n')}`,
  );
  return parts.join('\n\n');
}
