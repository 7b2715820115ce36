/**
 * speed.speculate: while the gate scores step k's candidate, step k+1's rollout starts under the
 * current skill, which most verdicts keep. It is written to `steps/step_k/speculative_rollout/`
 * with the hash of the skill it used; step k+1 adopts it (moves it to its own rollout folder, where
 * the resume-aware rollout reuses every row) only when its skill has that hash, and otherwise
 * throws it away, counting its calls as extra. So a kept candidate, a person's overrule, a patience
 * stop or a crash never leaves a rollout of the wrong skill in use: decisions are the same as
 * without it. Across an epoch end it guesses the skill the end leaves (see startSpeculation). Not
 * with a spend cap (it would spend before the cap is checked), gradient accumulation, or the
 * rollout going through a provider batch.
 */
import { existsSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { planTrainEpoch } from '../data/plan';
import { injectEmptySlowUpdate, skillHash } from '../skill/document';
import { makeDir, writeJsonAtomic } from '../store/atomic';
import { evalPaths, STEP_DIR, STEP_FILE } from '../store/layout';
import { artifactSchemas, readRunJson } from '../store/runSchemas';
import { readJsonl } from '../store/jsonl';
import { RESULT_ROWS } from '../store/runRows';
import type { LoopContext } from './loopContext';
import { rolloutFor } from './rollout';
import type { StepWork } from './step/work';

interface Pending {
  step: number;
  done: Promise<void>;
}

const running = new WeakMap<LoopContext, Pending>();

function speculativeDir(loop: LoopContext, step: number): string {
  return join(loop.layout.stepDir(step), STEP_DIR.speculativeRollout);
}

/** Starts step k+1's rollout under step k's skill, if the options and the step allow it. */
export function startSpeculation(loop: LoopContext, work: StepWork): void {
  const { s, input, ctx } = loop;
  if (!s.speculate || input.budgetCapped || s.accumulation !== 1 || ctx.batch?.stages.has('rollout')) return;
  // The next step: the next batch of this epoch, or the first of the next epoch.
  const lastOfEpoch = work.stepInEpoch + 1 >= loop.stepsPerEpoch;
  if (lastOfEpoch && work.epoch >= s.numEpochs) return;
  const next = planTrainEpoch(input.splits.train, {
    seed: s.seed,
    epoch: lastOfEpoch ? work.epoch + 1 : work.epoch,
    batchSize: s.batchSize,
    accumulation: 1,
  })[lastOfEpoch ? 0 : work.stepInEpoch + 1];
  if (!next) return;
  // The skill it will most likely start with: this one, after an epoch end that changes nothing
  // but what it always does (epoch 1's slow update adds the empty block). A wrong guess is only
  // thrown away: adoption checks the hash.
  const skill =
    lastOfEpoch && work.epoch === 1 && s.useSlowUpdate ? injectEmptySlowUpdate(work.skill) : work.skill;
  const dir = speculativeDir(loop, work.step);
  rmSync(dir, { recursive: true, force: true });
  writeJsonAtomic(join(dir, STEP_FILE.speculation), { step: work.step + 1, skill_hash: skillHash(skill) });
  const done = input.ledger
    // No other rollout call runs until the next step has adopted or dropped this one.
    .within('rollout', work.step + 1, 'step', () =>
      rolloutFor(ctx, next.items, skill, dir, 'rollout', () => {
        loop.speed.speculativeCalls++;
      }),
    )
    .then(
      () => undefined,
      // A failed or stopped speculation is thrown away; the step itself runs the rollout again.
      () => rmSync(join(dir, STEP_FILE.speculation), { force: true }),
    );
  running.set(loop, { step: work.step + 1, done });
}

/**
 * Before step `work.step` runs: its speculative rollout (from the previous step) becomes its own
 * rollout if it was made under the skill the step starts with; otherwise it is thrown away.
 */
export async function adoptSpeculation(
  loop: LoopContext,
  work: Pick<StepWork, 'step' | 'skill'>,
): Promise<void> {
  const pending = running.get(loop);
  if (pending && pending.step === work.step) {
    running.delete(loop);
    await pending.done;
  }
  if (work.step < 2) return;
  const dir = speculativeDir(loop, work.step - 1);
  if (!existsSync(dir)) return;
  const marker = readMarker(join(dir, STEP_FILE.speculation));
  const target = loop.layout.rolloutDir(work.step);
  if (marker?.step === work.step && marker.skill_hash === skillHash(work.skill) && !existsSync(target)) {
    rmSync(join(dir, STEP_FILE.speculation), { force: true });
    makeDir(dirname(target));
    renameSync(dir, target);
    return;
  }
  loop.speed.speculativeCallsDiscarded += readJsonl(evalPaths(dir).results, RESULT_ROWS).length;
  rmSync(dir, { recursive: true, force: true });
}

/** At the end of a run: a speculation whose step never came (patience, a stop) is finished and dropped. */
export async function dropSpeculation(loop: LoopContext): Promise<void> {
  const pending = running.get(loop);
  if (!pending) return;
  running.delete(loop);
  await pending.done;
  // A stopped run keeps it: the resumed step adopts it if its skill is still the same.
  if (loop.ctx.signal.aborted) return;
  const dir = speculativeDir(loop, pending.step - 1);
  loop.speed.speculativeCallsDiscarded += readJsonl(evalPaths(dir).results, RESULT_ROWS).length;
  rmSync(dir, { recursive: true, force: true });
}

/** The marker, or undefined when it is missing or damaged (the speculative rollout is then thrown away). */
function readMarker(path: string): { step: number; skill_hash: string } | undefined {
  try {
    return readRunJson(path, artifactSchemas.speculation);
  } catch {
    return undefined;
  }
}
