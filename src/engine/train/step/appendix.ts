/**
 * Skill-aware reflection's appendix flush (reference §5.4): after the gate, and after a skip too
 * (a step whose failures were all lapses has no body edits), the analysts' execution-lapse notes
 * are merged into the protected appendix of the current skill. The notes bypass the gate, as in
 * the reference: they only repeat rules the skill already has, and the next step's candidate (and
 * so its gate) carries them. When the appendix grows past
 * `skill_aware_consolidate_threshold`, one optimizer call may shorten it.
 */
import { appendixConsolidateContract, type AppendixConsolidateReply } from '../../llm/contracts/epochEnd';
import { CONSOLIDATE_SYSTEM, consolidateUserMessage } from '../../prompts/skillAware';
import { extractAppendixNotes, mergeAppendixNotes, replaceAppendix } from '../../skill/document';
import { STEP_FILE } from '../../store/layout';
import { artifactSchemas } from '../../store/runSchemas';
import { cachedArtifact } from '../artifacts';
import { askOptimizer } from '../ask';
import type { RunContext } from '../context';
import type { LoopContext } from '../loopContext';
import type { RawPatch } from '../reflect';
import { recordOf, type StageEnd, type StepStage, type StepWork } from './work';

/** `appendix_notes.json`: the reference's two lists, plus what a resumed run needs to say the same. */
export interface AppendixResult {
  step_notes: string[];
  appendix_after: string[];
  n_added: number;
  /** The note count before a consolidation call shortened the appendix. */
  consolidated_from?: number;
}

/** The reference's consolidation reply is capped at 4096 tokens. */
const CONSOLIDATE_MAX_TOKENS = 4096;

/** Every note of the step's analyst replies, in patch order. */
export function stepNotes(raw: readonly RawPatch[]): string[] {
  return raw.flatMap((p) => (Array.isArray(p.appendix_notes) ? p.appendix_notes : []));
}

/**
 * The appendix after this step's notes: merged without duplicates, then, past the threshold, one
 * consolidation call whose reply is kept only when it is non-empty and strictly shorter.
 */
export async function flushAppendix(
  ctx: RunContext,
  skill: string,
  notes: readonly string[],
  threshold: number,
): Promise<AppendixResult> {
  const before = extractAppendixNotes(skill);
  const after = mergeAppendixNotes(before, notes);
  const result: AppendixResult = {
    step_notes: [...notes],
    appendix_after: after,
    n_added: after.length - before.length,
  };
  if (threshold <= 0 || after.length <= threshold) return result;
  const reply = await askOptimizer<AppendixConsolidateReply>(
    ctx,
    'appendix_consolidate',
    appendixConsolidateContract(),
    CONSOLIDATE_SYSTEM,
    consolidateUserMessage(after),
    CONSOLIDATE_MAX_TOKENS,
  );
  if (!reply.ok) return result;
  const compacted = mergeAppendixNotes([], reply.value.appendix_notes);
  if (compacted.length === 0 || compacted.length >= after.length) return result;
  return { ...result, appendix_after: compacted, consolidated_from: after.length };
}

async function run(loop: LoopContext, work: StepWork): Promise<StageEnd> {
  if (!loop.s.skillAware.enabled) return 'next';
  const notes = stepNotes(work.raw);
  if (notes.length === 0) return 'next';
  const { state, ctx } = loop;
  // Saved before the skill changes, so a resumed step neither pays for consolidation again nor
  // merges the notes a second time.
  const result = await cachedArtifact<AppendixResult>(
    loop.layout.stepFile(work.step, STEP_FILE.appendixNotes),
    artifactSchemas.appendixNotes,
    () =>
      work.timed('appendix_s', 'appendix', () =>
        flushAppendix(ctx, state.current, notes, loop.s.skillAware.consolidateThreshold),
      ),
  );
  state.current = replaceAppendix(state.current, result.appendix_after);
  const consolidated = result.consolidated_from !== undefined ? result.appendix_after.length : undefined;
  recordOf(work).appendix({
    lapseNotes: result.step_notes.length,
    added: result.n_added,
    total: result.appendix_after.length,
    ...(consolidated !== undefined ? { consolidated } : {}),
  });
  ctx.emit({
    type: 'appendix/updated',
    step: work.step,
    epoch: work.epoch,
    added: result.n_added,
    total: result.appendix_after.length,
    ...(consolidated !== undefined ? { consolidated } : {}),
  });
  return 'next';
}

export const appendixStage: StepStage = { name: 'appendix', run };
