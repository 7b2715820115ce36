/**
 * An agent run whose final answer is empty is run again, in a fresh workspace with a reminder to
 * answer, as the reference does (EXEC_EMPTY_RESPONSE_RETRIES, default 1): an agent that stopped
 * without answering is not a wrong answer to the task until it has had that second chance. Every
 * run is paid: the reply (or the error) carries the tokens of all of them.
 */
import { spentBy, sumUsage, type BackendReply, type TaskContext, type Usage } from '../types';

/** The prompt of a run again after an empty answer; it names no skill file (delivery stays as it was). */
export function withAnswerReminder(prompt: string): string {
  return `${prompt}\n\nThe previous run of this task ended without a final answer. Read task.md again and give the final answer.`;
}

export async function rerunWhileEmpty(
  task: TaskContext,
  retries: number,
  runOnce: (task: TaskContext) => Promise<BackendReply>,
  onRerun: (n: number, of: number) => void,
  /** What the earlier runs spent, filled as they end (the caller reads it if the process exits at once). */
  earlier: Usage[] = [],
): Promise<BackendReply> {
  for (let attempt = 0; ; attempt++) {
    let reply: BackendReply;
    try {
      reply = await runOnce(attempt ? { ...task, prompt: withAnswerReminder(task.prompt) } : task);
    } catch (err) {
      // What the earlier runs spent is paid with this one's failure (read by spentBy).
      if (earlier.length) Object.assign(err as object, { spent: sumUsage([...earlier, spentBy(err)]) });
      throw err;
    }
    if (reply.text.trim() || attempt >= retries) {
      if (!earlier.length) return reply;
      return {
        ...reply,
        usage: sumUsage([...earlier, reply.usage]),
        trace: { ...reply.trace, emptyAnswerReruns: attempt },
      };
    }
    earlier.push(reply.usage);
    onRerun(attempt + 1, retries);
  }
}
