import type { BackendReply, ChatBackend, ChatRequest } from '../types';
import { LOAD_SKILL_TOOL } from '../../prompts/activation';
import { simTriggerReply } from './triggers';
import { capitalOf, harmfulRules, habits, hash, nextTurn } from './habits';

export interface SimTask {
  input: string;
  answers: string[];
  taskType?: string;
}

/** Rough token estimate (4 characters per token) so accounting has plausible numbers offline. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * Simulated target model. It "knows" each task's answer (it is built with the task list) but
 * has habits that distort some answers unless the skill in its system prompt corrects them.
 * Deterministic: the same skill and task always give the same reply.
 */
export class SimTargetBackend implements ChatBackend {
  readonly provider = 'sim';
  readonly cacheParams = { simulated: true };
  private readonly byInput = new Map<string, SimTask>();

  constructor(
    readonly model: string,
    tasks: Iterable<SimTask>,
    private readonly latencyMs = 0,
  ) {
    for (const t of tasks) this.byInput.set(t.input.trim(), t);
  }

  async call(req: ChatRequest): Promise<BackendReply> {
    await nextTurn(this.latencyMs);
    if (req.tools?.some((t) => t.name === LOAD_SKILL_TOOL)) return simTriggerReply(req);
    const system = req.messages.find((m) => m.role === 'system')?.content ?? '';
    const user = req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
    const task = this.findTask(user);
    const tag = /wrapped as <([a-z_]+)>/.exec(system)?.[1] ?? 'answer';
    let text: string;
    if (!task || task.answers.length === 0) {
      text = `[simulated target] I do not recognise this task.\n<${tag}>unknown</${tag}>`;
    } else {
      const answer = this.answer(task, system);
      text = `[simulated target] Applying the skill to a ${task.taskType ?? 'general'} task.\n<${tag}>${answer}</${tag}>`;
    }
    return {
      text,
      usage: { promptTokens: estimateTokens(system + user), completionTokens: estimateTokens(text) },
      model: this.model,
    };
  }

  private findTask(user: string): SimTask | undefined {
    const trimmed = user.trim();
    const exact = this.byInput.get(trimmed);
    if (exact) return exact;
    for (const [input, task] of this.byInput) if (trimmed.includes(input)) return task;
    return undefined;
  }

  private answer(task: SimTask, skill: string): string {
    let gold = task.answers[0] ?? '';
    if (task.taskType === 'capital') {
      const country = /capital of ([^?]+)\?/.exec(task.input)?.[1]?.trim() ?? '';
      gold = capitalOf[country] ?? 'I do not know';
    }
    let answer = gold;
    // Like a real model, the habit shows on most answers of its kind, not all (7 in 10, by content).
    const slips = hash(task.input) % 10 < 7;
    const reminders = appendixOf(skill);
    // A skill with an execution-notes appendix (skill-aware runs) meets an executor that sometimes
    // does not apply a rule it has (3 in 10, by content) until the appendix reminds it by name.
    const lapses = reminders !== undefined && hash(`lapse:${task.input}`) % 10 < 3;
    for (const habit of habits) {
      if (!habit.applies(gold, task.taskType)) continue;
      const corrected = habit.corrected.test(skill);
      if ((slips && !corrected) || (lapses && corrected && !reminders.includes(habit.name))) {
        answer = habit.distort(gold);
        break;
      }
    }
    if (harmfulRules.some((r) => r.effect.test(skill))) {
      answer = answer.replace(/\d+\.\d+/g, (n) => String(Math.round(Number(n))));
    }
    return answer;
  }
}

/** The text of the execution-notes appendix, if the skill has one. */
function appendixOf(skill: string): string | undefined {
  const start = skill.indexOf('<!-- APPENDIX_START -->');
  const end = skill.indexOf('<!-- APPENDIX_END -->', start);
  return start >= 0 && end > start ? skill.slice(start, end) : undefined;
}
