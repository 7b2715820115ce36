/** ③ aggregate: the hierarchical merge of the analysts' patches, with conflicting edits flagged. */
import type { UpdateMode } from '../../prompts/modes';
import { payloadKey } from '../../prompts/modes';
import { assignEditIds, type Edit } from '../../skill/applyEdits';
import { STEP_FILE } from '../../store/layout';
import { artifactSchemas } from '../../store/runSchemas';
import { aggregate, itemsOf, type Item, type MergedPatch } from '../aggregate';
import { cachedArtifact } from '../artifacts';
import { detectConflicts } from '../conflicts';
import type { LoopContext } from '../loopContext';
import { recordOf, type StageEnd, type StepStage, type StepWork } from './work';

async function run(loop: LoopContext, work: StepWork): Promise<StageEnd> {
  const mode = loop.s.updateMode;
  work.merged = await cachedArtifact(
    loop.layout.stepFile(work.step, STEP_FILE.merged),
    artifactSchemas.patch,
    async () =>
      withConflicts(
        await work.timed('aggregate_s', 'aggregate', () =>
          aggregate(loop.ctx, work.skill, work.raw, loop.metaSkill),
        ),
        mode,
      ),
  );
  recordOf(work).merged(itemsOf(work.merged, mode).length);
  return 'next';
}

export const aggregateStage: StepStage = { name: 'aggregate', run };

/** Give merged edits stable ids and flag pairs that pull the same rule in opposite directions. */
function withConflicts(merged: MergedPatch, mode: UpdateMode): MergedPatch {
  if (mode !== 'patch') return merged;
  const key = payloadKey(mode);
  const items = assignEditIds(itemsOf(merged, mode) as Edit[]) as Item[];
  const conflicts = detectConflicts(items);
  for (const c of conflicts) {
    for (const [self, other] of [
      [c.a, c.b],
      [c.b, c.a],
    ] as const) {
      const item = items.find((i) => i.id === self);
      if (item) item.conflicts_with = [...((item.conflicts_with as string[] | undefined) ?? []), other];
    }
  }
  return { ...merged, [key]: items, ...(conflicts.length ? { conflicts } : {}) };
}
