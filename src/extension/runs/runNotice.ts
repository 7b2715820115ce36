import type { EngineEvent } from '../../protocol/events';
import { STOPPED_BY_REQUEST } from '../../protocol/vocabulary';
import { formatScore } from './treeNodes';

export type EndEvent = Extract<EngineEvent, { type: 'run/finished' | 'run/stopped' | 'run/failed' }>;

/** Notifications turn `[text](target)` into a link; text from files and providers must not. */
function plain(text: string): string {
  return text.replace(/\]\(/g, ']\u200b(');
}

/** The notification for a run's last event: its kind, text and actions (pure, for tests). */
export function runNotice(
  name: string,
  event: EndEvent,
): { kind: 'info' | 'warning' | 'error'; text: string; actions: string[] } {
  name = plain(name);
  switch (event.type) {
    case 'run/finished': {
      const early = event.stoppedEarly ? ` Stopped early: ${plain(event.stoppedEarly)}.` : '';
      const report = event.reportPath ? ['Open Report'] : [];
      // Step 0 is the initial skill: there is nothing better to apply.
      if (event.bestStep === 0)
        return {
          kind: 'info',
          text: `SkillOpt: ${name} finished. No candidate beat the initial skill (${formatScore(event.baselineScore)}); your skill stays as it is.${early}`,
          actions: report,
        };
      return {
        kind: 'info',
        text: `SkillOpt: ${name} finished. Best selection score ${formatScore(event.bestScore)} (initial ${formatScore(event.baselineScore)}).${early}`,
        actions: [...report, 'Apply Best Skill'],
      };
    }
    case 'run/stopped':
      if (event.reason === STOPPED_BY_REQUEST)
        return {
          kind: 'info',
          text: `SkillOpt: ${name} stopped as you asked. Nothing accepted is lost.`,
          actions: ['Resume Run'],
        };
      return {
        kind: 'warning',
        text: `SkillOpt: ${name} stopped: ${plain(event.reason)}. Nothing accepted is lost.`,
        actions: ['Resume Run'],
      };
    case 'run/failed':
      return {
        kind: 'error',
        text: `SkillOpt: ${name} failed: ${plain(event.message)}`,
        actions: ['Show Log', 'Resume Run'],
      };
  }
}
