/**
 * The end of a step: the record is completed, the step buffer learns what happened (with the
 * rejected or turned-down edits), kept edits get their provenance, and the run folder commits.
 */
import { editFile } from '../skill/package/edits';
import { SKILL_FILE } from '../skill/package/text';
import type { StepRecord } from '../../protocol/records';
import { isAccepted } from '../../protocol/vocabulary';
import type { Edit } from '../skill/applyEdits';
import { writeJsonAtomic } from '../store/atomic';
import { RUN_FILE, STEP_FILE } from '../store/layout';
import { artifactSchemas, readArtifact } from '../store/runSchemas';
import type { Fallback, LoopContext } from './loopContext';
import { recoverProvenance, type ProvenanceRecord } from './provenance';
import type { StepWork } from './step/work';
import { recordOf } from './step/work';
import { buildBufferEntry, compactRejected } from './stepBuffer';

export function commitStep(
  loop: LoopContext,
  work: StepWork,
  t: { started: number; fallbacks: readonly Fallback[] },
): StepRecord {
  const { state } = loop;
  const gate = work.gate;
  if (gate && isAccepted(gate.action) && work.update?.report) recordProvenance(loop, work);
  const record = recordOf(work).finish({
    state,
    tokens: loop.input.ledger.stepTokens(work.step),
    withOrigins: gate !== undefined,
    fallbacks: t.fallbacks,
    seconds: (Date.now() - t.started) / 1000,
  });
  if (gate) {
    const review = record.review;
    const entry = buildBufferEntry({
      step: record.step,
      action: record.action,
      results: work.results,
      raw: work.raw,
      scoreBefore: gate.before,
      scoreAfter: gate.sel.projected,
      rejected:
        gate.action === 'reject'
          ? compactRejected(work.rankedItems).map((r) =>
              review?.decision === 'human_reject'
                ? { ...r, human: true, ...(review.reason ? { reason: review.reason } : {}) }
                : r,
            )
          : // Edits the person turned down (with their reason) are rejections the optimizer should see too.
            humanRejectedItems(work.update?.edits ?? [], work.humanRejected),
    });
    state.buffer.push(entry);
    writeJsonAtomic(loop.layout.stepFile(record.step, STEP_FILE.digest), entry);
  }
  state.history.push(record);
  state.lastCompletedStep = record.step;
  loop.files.commitStep(record, state.history, state.snapshot(), state.current, state.best);
  loop.ctx.emit({ type: 'step/finished', record });
  return record;
}

/** Append the applied edits of an accepted step, with their evidence, to provenance.json. */
function recordProvenance(loop: LoopContext, work: StepWork): void {
  const gate = work.gate!;
  const { edits, report } = work.update!;
  const turnedDown = new Set(work.humanRejected.map((r) => r.id));
  const origins = recoverProvenance(edits, work.raw, loop.s.updateMode);
  const path = loop.layout.file(RUN_FILE.provenance);
  const saved = readArtifact<ProvenanceRecord[]>(path, artifactSchemas.records) ?? [];
  const records = saved.filter((r) => r.step !== work.step);
  edits.forEach((e, i) => {
    const row = report?.[i];
    if (!row?.status.startsWith('applied') || turnedDown.has(String(e.id))) return;
    records.push({
      step: work.step,
      epoch: work.epoch,
      edit_id: String(e.id),
      op: String(e.op),
      ...(e.target ? { target: String(e.target) } : {}),
      ...(e.content ? { content: String(e.content) } : {}),
      ...(editFile(e) !== SKILL_FILE ? { file: editFile(e) } : {}),
      ...(e.source_type ? { source_type: String(e.source_type) } : {}),
      ...(e.support_count !== undefined ? { support_count: Number(e.support_count) } : {}),
      action: gate.action,
      score_before: gate.before,
      score_after: gate.sel.projected,
      ...origins[i],
    });
  });
  writeJsonAtomic(path, records);
}

function humanRejectedItems(
  edits: readonly Edit[],
  rejected: ReadonlyArray<{ id: string; reason?: string }>,
): Array<Record<string, unknown>> {
  const byId = new Map(edits.map((e) => [String(e.id), e]));
  return rejected.flatMap((r) => {
    const e = byId.get(r.id);
    return e
      ? [
          {
            op: e.op,
            target: e.target ?? '',
            content: e.content ?? '',
            human: true,
            ...(r.reason ? { reason: r.reason } : {}),
          },
        ]
      : [];
  });
}
