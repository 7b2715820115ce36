/**
 * Which model judges natural-language expectations: evaluation.judge_model on the optimizer's backend
 * (its keys, base URL, Azure settings), the optimizer model itself when blank. It is a client of its
 * own, never the optimizer client: the optimizer refuses test items, and the judge must grade them.
 */
import type { SkillOptConfig } from './config/schema';
import type { TaskItem } from './data/tasks';
import type { ModelClient } from './llm/types';

export function needsJudge(tasks: readonly TaskItem[]): boolean {
  return tasks.some((t) => t.assertions?.some((a) => a.kind === 'judge'));
}

/** The config the judge's client is built from: the optimizer role, with the judge's model name. */
export function judgeConfig(cfg: SkillOptConfig): SkillOptConfig {
  const model = cfg.evaluation.judge_model.trim();
  return model ? { ...cfg, model: { ...cfg.model, optimizer: model } } : cfg;
}

export function judgeNotice(cfg: SkillOptConfig, judge: ModelClient, tasks: readonly TaskItem[]): string {
  const withRubrics = tasks.filter((t) => t.assertions?.some((a) => a.kind === 'judge')).length;
  const which = cfg.evaluation.judge_model.trim()
    ? 'evaluation.judge_model'
    : 'the optimizer model; set evaluation.judge_model for another';
  return `judge: ${judge.backend} ${judge.model} (${which}) grades the expectations of ${withRubrics} task(s), one paid call per task and skill, cached`;
}
