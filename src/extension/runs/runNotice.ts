import { describeGateTest } from '../../protocol/gateText';
import type { EngineEvent } from '../../protocol/events';
import { STOPPED_BY_REQUEST } from '../../protocol/vocabulary';
import { capUsedText } from '../../protocol/words';
import { formatScore } from './treeNodes';

export type ReviewRequest = Extract<EngineEvent, { type: 'review/requested' }>;

/** The actions of the "waiting for you" notification, in the order shown. */
export const REVIEW_ACTIONS = ['Review', 'Accept', 'Reject'] as const;

/** The notification when the engine pauses for the person (pure, for tests). */
export function reviewNotice(name: string, event: ReviewRequest): { text: string; actions: string[] } {
  const scores =
    event.phase === 'after_gate' && event.candidateScore !== undefined
      ? event.gateTest?.verdict === 'inconclusive'
        ? ` The gate could not tell it from noise: ${formatScore(event.candidateScore)} against ${formatScore(event.currentScore)} now (${describeGateTest(event.gateTest)}).`
        : ` It passed the gate: ${formatScore(event.candidateScore)} against ${formatScore(event.currentScore)} now.`
      : event.phase === 'before_gate'
        ? ' The gate scores what you keep.'
        : '';
  const edits = `${event.edits.length} edit${event.edits.length === 1 ? '' : 's'}`;
  return {
    text: `SkillOpt: ${plain(name)} is paused until you review step ${event.step} (${edits}).${scores}`,
    actions: [...REVIEW_ACTIONS],
  };
}

/**
 * The run still asks the question a surface was drawn for: the same question, not merely the same
 * step (a stopped and resumed run asks its step again, as a new question).
 */
export function asksStill(event: ReviewRequest, waiting: ReviewRequest | undefined): boolean {
  return waiting?.questionId === event.questionId;
}

/**
 * A "waiting for you" notification clicked after its question stopped waiting (decided in the
 * editor, the run stopped, or the run waits on a later step or asked this one again): what it says
 * instead of acting (pure, for tests). `now` is the step the run waits on now, if any.
 */
export function staleReviewNotice(
  name: string,
  event: ReviewRequest,
  choice: string,
  now?: number,
): { text: string; actions: string[] } {
  const done = choice === 'Accept' ? 'accepted' : choice === 'Reject' ? 'rejected' : 'opened';
  if (now === event.step) {
    return {
      text: `SkillOpt: ${plain(name)} asked about step ${event.step} again since this notification (the run was stopped and resumed); nothing was ${done}. Review step ${now} as the run asks it now.`,
      actions: [`Review Step ${now}`],
    };
  }
  const then =
    now !== undefined
      ? ` It is waiting for your review of step ${now} now.`
      : ' It is not waiting for you now.';
  return {
    text: `SkillOpt: ${plain(name)} no longer waits on step ${event.step} (it was decided, or the run moved on); nothing was ${done}.${then}`,
    actions: now !== undefined ? [`Review Step ${now}`] : [],
  };
}

/**
 * The notification for an engine warning during a run (a budget it cannot verify, a resume under a
 * changed config, skill or data, a decision it could not apply): in the CLI it is a line on the
 * console; in the editor, without this, it would reach no one (pure, for tests).
 */
export function warningNotice(name: string, message: string): { text: string; actions: string[] } {
  return { text: `SkillOpt: ${plain(name)}: ${plain(message)}`, actions: ['Show Log'] };
}

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
        // Caps count the whole run: resuming under the same one would stop again at once.
        text: `SkillOpt: ${name} stopped: ${plain(event.reason)}. Nothing accepted is lost.${event.cap ? ` The cap counts the whole run: raise ${event.cap.key} above ${capUsedText(event.cap)} in the config before resuming.` : ''}`,
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
