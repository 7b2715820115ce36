import type { EngineEvent } from '../../protocol/events';
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
      return {
        kind: 'info',
        text: `SkillOpt: ${name} finished. Best selection score ${formatScore(event.bestScore)} (initial ${formatScore(event.baselineScore)}).${early}`,
        actions: [...(event.reportPath ? ['Open Report'] : []), 'Apply Best Skill'],
      };
    }
    case 'run/stopped':
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
