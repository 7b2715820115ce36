/**
 * What Cancel Provider Batch says: the confirmation, then one message per outcome of the batches
 * found. Pure (no `vscode`), so unit tests read the words.
 */
import type { CancelBatchesResult, CancelledBatchInfo } from '../../protocol/engine';
import { relative } from 'node:path';
import { RUN_DIR } from '../../engine/store/layout';
import { BATCH_CANCEL_OUTCOMES, type BatchCancelOutcome } from '../../protocol/vocabulary';

/** The confirmation's button (VS Code adds its own Cancel, which keeps the batch). */
export const CANCEL_BATCH_BUTTON = 'Cancel Batch';

export function confirmCancelText(runName: string, batches: number): { message: string; detail: string } {
  const one = batches === 1;
  return {
    message: `Cancel the provider batch${one ? '' : 'es'} of ${runName}?`,
    detail: [
      `The provider stops answering ${one ? 'it' : 'them'} now. What ${one ? 'the batch' : 'each batch'} answered before the cancel is billed by the provider (at the batch price).`,
      "Resume Run then collects those answers, counted once in the run's spend, and asks the rest one by one at list price.",
      'Nothing is trained now. To keep the batch instead, close this and resume the run (its answers come at half price).',
    ].join('\n'),
  };
}

export interface CancelMessage {
  severity: 'info' | 'warning';
  text: string;
}

/** The run's evaluations by folder (layout.ts RUN_DIR), then by stage for any other. */
const folderWords: Record<string, string> = {
  [RUN_DIR.testBest]: "the best skill's test evaluation",
  [RUN_DIR.testBaseline]: "the initial skill's test evaluation",
  [RUN_DIR.testFinal]: "the final skill's test evaluation",
  [RUN_DIR.testNoSkill]: 'the no-skill test evaluation',
};
const stageWords: Record<string, string> = {
  test: 'the test evaluation',
  selection: 'a selection evaluation',
  eval: 'the evaluation',
};

/** `the openai batch batch_abc of the best skill's test evaluation`. */
function batchName(b: CancelledBatchInfo, outDir: string): string {
  const folder = relative(outDir, b.file).split(/[\\/]/)[0] ?? '';
  const evaluation = folderWords[folder] ?? stageWords[b.stage] ?? `the ${b.stage} evaluation`;
  return `the ${b.provider} batch${b.batchId ? ` ${b.batchId}` : ''} of ${evaluation}`;
}

function list(items: string[]): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

const answered = (b: CancelledBatchInfo): string =>
  b.status ? `${b.status.done} of ${b.status.total} answered` : 'answers unknown';

function message(
  outcome: BatchCancelOutcome,
  found: CancelledBatchInfo[],
  run: string,
  outDir: string,
): CancelMessage {
  const one = found.length === 1;
  const name = (b: CancelledBatchInfo): string => batchName(b, outDir);
  switch (outcome) {
    case 'cancelled': {
      const rest = found.reduce((n, b) => n + (b.status ? b.status.total - b.status.done : 0), 0);
      return {
        severity: 'info',
        text:
          `SkillOpt: cancelled ${list(found.map((b) => `${name(b)} (${answered(b)})`))} in ${run}. ` +
          `The provider bills what was answered; Resume Run collects it and asks the other ${rest} one by one at list price.`,
      };
    }
    case 'ended':
      return {
        severity: 'info',
        text:
          `SkillOpt: nothing to cancel: ${list(found.map((b) => `${name(b)} (${b.status?.detail ?? 'ended'}, ${answered(b)})`))} ` +
          `in ${run} ${one ? 'has' : 'have'} already ended. Resume Run collects ${one ? 'it' : 'them'}.`,
      };
    case 'no_id':
      return {
        severity: 'warning',
        text:
          `SkillOpt: cannot cancel ${list(found.map(name))} in ${run}: the run stopped before ` +
          `${one ? 'its' : 'their'} id was written. Resume Run finds and collects ${one ? 'it' : 'them'}; ` +
          "to cancel now, use the provider's console.",
      };
    case 'other_provider':
      return {
        severity: 'warning',
        text:
          `SkillOpt: not cancelled: ${list(found.map(name))} in ${run} went through another provider than ` +
          "this config's target. Cancel it with the config that sent it, or in the provider's console.",
      };
  }
}

/** One message per outcome found (in the vocabulary's order), or one saying there was nothing. */
export function cancelOutcomeMessages(runName: string, result: CancelBatchesResult): CancelMessage[] {
  if (!result.batches.length)
    return [{ severity: 'info', text: `SkillOpt: ${runName} records no provider batch: nothing to cancel.` }];
  return BATCH_CANCEL_OUTCOMES.flatMap((o) => {
    const found = result.batches.filter((b) => b.outcome === o);
    return found.length ? [message(o, found, runName, result.outDir)] : [];
  });
}

/**
 * What "Cancel Its Batch, Start New" (Evaluate Skill) says after cancelling the batch an earlier
 * evaluation left out, and whether the new evaluation may start: not while a batch it could not
 * cancel may still be answering (the same tasks would be paid twice).
 */
export function earlierEvaluationCancelled(
  result: CancelBatchesResult,
  folder: string,
): CancelMessage & { startNew: boolean } {
  const stuck = result.batches.filter((b) => b.outcome === 'no_id' || b.outcome === 'other_provider');
  if (stuck.length)
    return {
      severity: 'warning',
      startNew: false,
      text:
        `SkillOpt: could not cancel ${list(stuck.map((b) => batchName(b, result.outDir)))} left by the earlier evaluation (${folder}): ` +
        (stuck[0].outcome === 'no_id'
          ? 'it stopped before the batch id was written. '
          : "it went through another provider than this config's target. ") +
        "No new evaluation was started; continue the earlier one to collect it, or cancel it in the provider's console.",
    };
  const parts = result.batches.map((b) =>
    b.outcome === 'cancelled'
      ? `cancelled ${batchName(b, result.outDir)} (${answered(b)}, billed by the provider)`
      : `${batchName(b, result.outDir)} had already ended (${answered(b)}; its answers stay in ${folder})`,
  );
  return {
    severity: 'info',
    startNew: true,
    text: `SkillOpt: ${parts.length ? list(parts) : `the earlier evaluation (${folder}) records no batch any more`}; starting a new evaluation.`,
  };
}
