import type { EngineEvent } from '../../src/protocol/events';

type Ready = Extract<EngineEvent, { type: 'candidate/ready' }>;

/** The engine's "waiting for you" before the gate, for a candidate event (human-first). */
export function askBeforeGate(ready: Ready): Extract<EngineEvent, { type: 'review/requested' }> {
  return {
    type: 'review/requested',
    questionId: `asked-${ready.candidateHash}`,
    step: ready.step,
    epoch: ready.epoch,
    phase: 'before_gate',
    candidateHash: ready.candidateHash,
    candidatePath: ready.candidatePath,
    edits: ready.edits,
  };
}
