/**
 * The Output channel's line for an engine event a person follows a run by: each verdict, a pause
 * for review, a warning or a fallback, and how the run ended. Progress and spend stay in the tree and the status bar.
 * Pure, for tests.
 */
import type { EngineEvent } from '../../protocol/events';
import { isAccepted, STOPPED_BY_REQUEST } from '../../protocol/vocabulary';
import { candidateName } from '../../protocol/webview';
import { actionLabel } from '../../protocol/words';
import { formatScore } from './treeNodes';

export function runLogLine(name: string, event: EngineEvent): string | undefined {
  switch (event.type) {
    case 'gate/verdict': {
      const what =
        event.origin === 'final'
          ? 'final check'
          : event.origin === 'human'
            ? `step ${event.step}`
            : candidateName(event.origin, event.step, event.epoch);
      // The event's current score is the run's after the decision: an accepted candidate's own.
      const scores = isAccepted(event.action)
        ? `scored ${formatScore(event.candidateScore)}`
        : `${formatScore(event.candidateScore)} against ${formatScore(event.currentScore)}`;
      return `${name}: ${what} ${actionLabel(event.action)} (${scores}; best ${formatScore(event.bestScore)})`;
    }
    case 'review/requested':
      return `${name}: step ${event.step} waits for your review`;
    case 'run/finished':
      return `${name}: finished; best selection score ${formatScore(event.bestScore)} at step ${event.bestStep} (initial ${formatScore(event.baselineScore)})${event.reportPath ? `; report ${event.reportPath}` : ''}`;
    case 'run/stopped':
      return `${name}: ${event.reason === STOPPED_BY_REQUEST ? 'stopped as you asked' : `stopped (${event.reason})`}; resume with Resume Run or ${event.resumeCommand}`;
    case 'run/failed':
      return `${name}: failed: ${event.message}`;
    case 'warning':
      return `${name}: warning: ${event.message}`;
    case 'fallback':
      return `${name}: fallback in ${event.stage}: ${event.reason}`;
    default:
      return undefined;
  }
}
