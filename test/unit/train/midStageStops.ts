/**
 * Where the kill-and-resume tests stop a run: inside a stage, after some of its model calls were
 * answered and kept (the example config's shape: step 2's stages, the slow update at step 8).
 * Shared by the sim tests (resume.test.ts) and the priced wire tests (resumeWire.test.ts).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Stage } from '../../../src/engine/llm/types';
import { rowsIn, type CallRecord } from './helpers';

export function filesIn(dir: string): number {
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')).length : 0;
}

/** A stop that lands inside a stage, after some of its model calls were answered and kept. */
export interface MidStageStop {
  name: string;
  /** Step (as the loop's events number it) and accounting stage of the calls the stop lands among. */
  step: number;
  stage: Stage;
  /** Loop stage the calls belong to, when the accounting stage alone is ambiguous (selection). */
  phase?: string;
  /** Stop right after this many of those replies arrived. */
  after: number;
  /** How many of those calls' results the interrupted run left on disk (items, minibatches). */
  kept: (outDir: string) => number;
}

const step2 = (outDir: string, ...parts: string[]): string => join(outDir, 'steps', 'step_0002', ...parts);
const slow2 = (outDir: string, ...parts: string[]): string =>
  join(outDir, 'slow_update', 'epoch_02', ...parts);

export const midStageStops: MidStageStop[] = [
  {
    name: 'mid-rollout, after 3 of the step\u2019s 8 items were answered',
    step: 2,
    stage: 'rollout',
    after: 3,
    kept: (d) => rowsIn(step2(d, 'rollout')),
  },
  {
    name: 'mid-reflection, after the first of the step\u2019s analyst minibatches was answered',
    step: 2,
    stage: 'analyst',
    after: 1,
    kept: (d) => filesIn(step2(d, 'patches')),
  },
  {
    name: 'mid-gate, after 5 selection items were answered',
    step: 2,
    stage: 'selection',
    phase: 'evaluate',
    after: 5,
    kept: (d) => rowsIn(step2(d, 'selection_eval')),
  },
  {
    name: 'mid-slow-update, after 15 of the 40 paired rollouts were answered',
    step: 8,
    stage: 'slow_rollout',
    after: 15,
    kept: (d) => rowsIn(slow2(d, 'rollout_prev')) + rowsIn(slow2(d, 'rollout_curr')),
  },
];

/** A stop in the slow update's gate, after its own optimizer call (the guidance) was answered. */
export const slowGateStop: MidStageStop = {
  name: 'mid-slow-update gate, after the guidance reply and 5 of its selection items',
  step: 8,
  stage: 'selection',
  phase: 'slow_update',
  after: 5,
  kept: (d) => rowsIn(slow2(d, 'selection_eval')),
};

export const matches =
  (stop: MidStageStop) =>
  (c: CallRecord): boolean =>
    c.step === stop.step && c.stage === stop.stage && (stop.phase === undefined || c.phase === stop.phase);
