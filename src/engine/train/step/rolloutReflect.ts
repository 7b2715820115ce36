/**
 * ① rollout and ② reflect, overlapped per micro-batch: analysts start on a minibatch as soon as
 * its trajectories are in. Then, when one failure pattern dominates, deep reflection
 * cross-references a few failures and successes over several turns (its patch joins the analysts').
 */
import type { StepRecord } from '../../../protocol/records';
import { itemsOf } from '../aggregate';
import { deepReflect, shouldDeepReflect } from '../deepReflect';
import type { LoopContext } from '../loopContext';
import { StreamingReflector } from '../reflect';
import { isErrored, meanScore, rolloutFor } from '../rollout';
import type { StageEnd, StepStage, StepWork } from './work';
import { round6, StepRecordBuilder } from './record';

async function run(loop: LoopContext, work: StepWork): Promise<StageEnd> {
  const { s, ctx, layout } = loop;
  const batchRows: StepRecord['accumulation_batches'] = [];
  for (const [a, batch] of work.batches.entries()) {
    const reflector = new StreamingReflector(ctx, {
      skill: work.skill,
      patchesDir: layout.patchesDir(work.step, a, s.accumulation),
      itemIds: batch.items.map((i) => i.id),
      seed: batch.seed,
      stepBufferText: work.bufferText,
      ...(loop.metaSkill ? { metaSkill: loop.metaSkill } : {}),
    });
    let passed = 0;
    const results = await work.timed('rollout_s', 'rollout', () =>
      rolloutFor(
        ctx,
        batch.items,
        work.skill,
        layout.rolloutDir(work.step, a, s.accumulation),
        'rollout',
        (r, done, total) => {
          passed += r.hard;
          reflector.onResult(r);
          ctx.emit({
            type: 'rollout/progress',
            step: work.step,
            stage: 'rollout',
            done,
            total,
            hard: passed / done,
          });
        },
        undefined,
        {
          sendOrder: reflector.visitOrder,
          ...(work.beside ? { onSent: () => void work.beside?.() } : {}),
        },
      ),
    );
    const raw = await work.timed('reflect_s', 'reflect', () => reflector.finish());
    const sc = meanScore(results);
    batchRows.push({
      batch_idx: a,
      batch_seed: batch.seed,
      n_envs: results.length,
      hard: round6(sc.hard),
      soft: round6(sc.soft),
      n_failure_patches: raw.filter((p) => p.source_type === 'failure').length,
      n_success_patches: raw.filter((p) => p.source_type === 'success').length,
    });
    work.results.push(...results);
    work.raw.push(...raw);
  }

  const deep = s.deepReflect;
  if (
    deep.enabled &&
    shouldDeepReflect(work.results, { threshold: deep.threshold, everyStep: deep.everyStep }).run
  ) {
    const patch = await work.timed('reflect_s', 'deep_reflect', () =>
      deepReflect(ctx, {
        skill: work.skill,
        results: work.results,
        seed: work.batches[0]?.seed ?? s.seed,
        failures: deep.failures,
        successes: deep.successes,
        rounds: deep.rounds,
        stepBufferText: work.bufferText,
        ...(loop.metaSkill ? { metaSkill: loop.metaSkill } : {}),
        dir: work.dir,
      }),
    );
    if (patch) work.raw.push(patch);
  }

  // The record below reads the current and best scores: the baseline's, in step 1.
  await work.beside?.();
  const raw = work.raw;
  work.rolloutScore = meanScore(work.results);
  work.record = new StepRecordBuilder({
    step: work.step,
    epoch: work.epoch,
    stepInEpoch: work.stepInEpoch,
    timing: work.timing,
    rollout: work.rolloutScore,
    rolloutN: work.results.length,
    batches: batchRows,
    patches: {
      total: raw.length,
      failure: raw.filter((p) => p.source_type === 'failure').length,
      success: raw.filter((p) => p.source_type === 'success').length,
      editsProposed: raw.reduce((n, p) => n + itemsOf(p.patch, s.updateMode).length, 0),
    },
    state: loop.state,
  });
  work.record.errored(work.results.filter(isErrored).length);
  const hasItems = raw.some((p) => itemsOf(p.patch, s.updateMode).length > 0);
  return hasItems ? 'next' : 'skip_no_patches';
}

export const rolloutReflectStage: StepStage = { name: 'rollout_reflect', run };
