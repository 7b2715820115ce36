/**
 * "Waiting for you": a live run paused for the person's review is one state, folded from the
 * engine's events, that the tree and the notification read.
 */
import assert from 'node:assert/strict';
import { inconclusiveGateTest } from '../../support/gateTest';
import type { EngineEvent } from '../../../src/protocol/events';
import { started } from './events';
import { applyEvent, type LiveState, type RunView } from '../../../src/extension/runs/liveState';
import { reviewNotice, type ReviewRequest } from '../../../src/extension/runs/runNotice';
import { runNode, stepNodes } from '../../../src/extension/runs/treeNodes';
import { Commands, ReviewCommands } from '../../../src/extension/constants';
import { menuOf } from './menus';

const request: ReviewRequest = {
  type: 'review/requested',
  questionId: 'q-2',
  step: 2,
  epoch: 1,
  phase: 'after_gate',
  candidateHash: 'h',
  candidatePath: '/runs/a/steps/step_0002/candidate_skill.md',
  edits: [
    { id: 'e-1', op: 'append', content: 'Use ISO dates.' },
    { id: 'e-2', op: 'append', content: 'Answer in one line.' },
  ],
  candidateScore: 0.625,
  currentScore: 0.5,
};

function fold(events: EngineEvent[]): LiveState {
  let s: LiveState | undefined;
  events.forEach((e, i) => (s = applyEvent(s, i, e)));
  return s!;
}

const stage: EngineEvent = { type: 'stage/started', step: 2, epoch: 1, stage: 'review' };

function view(live: LiveState): RunView {
  return {
    dir: '/runs/a',
    name: 'a',
    status: 'running',
    writer: 'skillopt-vscode',
    config: {},
    history: [],
    epochs: [],
    live,
  };
}

describe('extension runs: a run waiting for the person', () => {
  it('waits from the request until the decision, and never after the run ends', () => {
    const waiting = fold([started, stage, request]);
    assert.equal(waiting.waiting?.step, 2);
    const decided: EngineEvent = {
      type: 'review/decided',
      step: 2,
      phase: 'after_gate',
      decision: 'accept',
      rejectedEdits: [],
    };
    assert.equal(fold([started, stage, request, decided]).waiting, undefined);
    const other: EngineEvent = { ...decided, step: 1, phase: 'overrule' };
    assert.equal(fold([started, stage, request, other]).waiting?.step, 2, "another step's decision");
    const stopped: EngineEvent = { type: 'run/stopped', outDir: '/runs/a', reason: 'x', resumeCommand: '' };
    assert.equal(fold([started, stage, request, stopped]).waiting, undefined);
  });

  it('shows the run and its step as waiting, the step row opening the review', () => {
    const run = view(fold([started, stage, request]));
    assert.match(runNode(run).description ?? '', /^waiting for your review of step 2/);
    const row = stepNodes(run, 1).find((n) => n.step === 2);
    assert.equal(row?.description, 'waiting for your review');
    assert.equal(row?.icon?.id, 'bell');
    assert.deepEqual(row?.command?.arguments, ['/runs/a']);
    assert.equal(row?.command?.command, 'skillopt.review.openWaiting');
    const busy = stepNodes(view(fold([started, stage])), 1).find((n) => n.step === 2);
    assert.equal(busy?.command, undefined, 'a step the engine works on opens nothing');
  });

  it("offers the review on the waiting run's row (inline and in its menu) beside Stop, and only while it waits", () => {
    const waiting = runNode(view(fold([started, stage, request]))).contextValue!;
    assert.deepEqual(menuOf(waiting, 'inline'), [ReviewCommands.openWaiting, Commands.stopRun].sort());
    assert.ok(menuOf(waiting).includes(ReviewCommands.openWaiting));
    assert.ok(menuOf(waiting).includes('skillopt.showGateHistory'));
    const busy = runNode(view(fold([started, stage]))).contextValue!;
    assert.deepEqual(menuOf(busy, 'inline'), [Commands.stopRun]);
    assert.ok(!menuOf(busy).includes(ReviewCommands.openWaiting));
    // Waiting is a live run with one more action: every other action of a live row stays on it.
    assert.deepEqual(
      menuOf(waiting).filter((c) => c !== ReviewCommands.openWaiting),
      menuOf(busy),
    );
  });

  it('says when the gate could not tell the candidate from noise (on_inconclusive: ask), with its test', () => {
    const gateTest = inconclusiveGateTest;
    const asked = { ...request, gateTest } as Extract<EngineEvent, { type: 'review/requested' }>;
    assert.match(
      reviewNotice('house-style', asked).text,
      /The gate could not tell it from noise: 0\.625 against 0\.500 now \(p 0\.313 \(sign test, 20 items × 1\)/,
    );
  });

  it('asks with Review, Accept and Reject, naming the step and the gate scores', () => {
    assert.deepEqual(reviewNotice('house-style', request), {
      text: 'SkillOpt: house-style is paused until you review step 2 (2 edits). It passed the gate: 0.625 against 0.500 now.',
      actions: ['Review', 'Accept', 'Reject'],
    });
    const first = reviewNotice('hs', { ...request, phase: 'before_gate', edits: [request.edits[0]!] });
    assert.match(first.text, /review step 2 \(1 edit\)\. The gate scores what you keep\.$/);
  });
});
