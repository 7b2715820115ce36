/**
 * What a finished run's summary.json says about its gate beside the steps: the power check, and the
 * target alone (the no-skill baseline) or that it was not scored. Read for the Runs view and Gate
 * History; a summary from before these fields (or the reference's) gives none of them.
 */
import type { GatePower, NoSkillScores } from '../../protocol/records';
import { artifactSchemas } from './runSchemas';

export interface RunGateFacts {
  gatePower?: GatePower;
  noSkill?: NoSkillScores;
  /** The run scored its end without the target alone (evaluation.no_skill_baseline: false). */
  noSkillOff?: true;
}

export function gateFactsOf(summary: Record<string, unknown> | undefined): RunGateFacts {
  const parsed = artifactSchemas.gateFacts.safeParse(summary ?? {});
  if (!parsed.success) return {};
  const s = parsed.data;
  return {
    ...(s.gate_power ? { gatePower: s.gate_power } : {}),
    ...(s.no_skill_selection_hard !== undefined
      ? { noSkill: { selection: s.no_skill_selection_hard, test: s.no_skill_test_hard ?? null } }
      : {}),
    ...(s.report?.no_skill_off ? { noSkillOff: true as const } : {}),
  };
}
