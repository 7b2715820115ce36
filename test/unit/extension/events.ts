/** Engine events the extension's unit tests fold: one run's start. */
import type { EngineEvent } from '../../../src/protocol/events';

export const started: EngineEvent = {
  type: 'run/started',
  runId: '/runs/a',
  outDir: '/runs/a',
  totalSteps: 6,
  epochs: 2,
  stepsPerEpoch: 3,
  splitSizes: { train: 24, val: 18, test: 18 },
  optimizer: 'sim/sim-optimizer',
  target: 'sim/sim-target',
  simulated: true,
};
