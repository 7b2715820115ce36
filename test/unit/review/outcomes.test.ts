import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  injectEmptyAppendix,
  injectEmptySlowUpdate,
  replaceAppendix,
  replaceSlowUpdate,
} from '../../../src/engine/skill/document';
import { lineHunks } from '../../../src/engine/skill/hunks';
import { applyLineOps, ReviewSession } from '../../../src/extension/review/session';
import { previousForDocument } from '../../../src/extension/review/injectedBlocks';
import {
  endedMessage,
  endedReviewOf,
  endedTitle,
  reviewOwnsLine,
  waitsOnRun,
  whyNoEffect,
} from '../../../src/extension/review/outcomes';
import type { CandidateEdit } from '../../../src/protocol/events';
import type { ReviewMode } from '../../../src/protocol/vocabulary';

const raw = readFileSync(join(__dirname, '../../../examples/house-style/SKILL.md'), 'utf8');
const previous = injectEmptySlowUpdate(raw);
const slowCandidate = replaceSlowUpdate(previous, '- Answer in one line.');

function slowUpdate(docText: string, live = false, mode: ReviewMode = 'auto'): ReviewSession {
  return ReviewSession.create({
    runId: 'run-1',
    step: 6,
    epoch: 1,
    origin: 'slow_update',
    mode,
    live,
    edits: [],
    hunks: lineHunks(previous, slowCandidate),
    previousText: previous,
    candidateText: slowCandidate,
    docText,
  });
}

describe('review outcomes: a slow-update candidate (hunks, no edit ids)', () => {
  it('is shown and accepted on a SKILL.md without the engine-added empty block', () => {
    const s = slowUpdate(raw);
    assert.equal(s.withFate('conflict').length, 0);
    assert.equal(s.placedOwners().length, 1);
    const shown = applyLineOps(raw, s.begin().ops);
    assert.equal(whyNoEffect(s, { kind: 'whole', accept: true, fromDiff: false }), undefined);
    const accepted = s.acceptCandidate();
    assert.equal(applyLineOps(shown, accepted.ops), slowCandidate);
    assert.equal(s.phase, 'done');
    assert.equal(accepted.record?.candidate, 'accept');
  });

  it('says why Accept All cannot act when the person rewrote where the change goes, and the diff can', () => {
    const before = replaceSlowUpdate(previous, '- Old rule.');
    const after = replaceSlowUpdate(before, '- New rule.');
    const s = ReviewSession.create({
      runId: 'run-1',
      step: 6,
      epoch: 1,
      origin: 'slow_update',
      mode: 'auto',
      live: false,
      edits: [],
      hunks: lineHunks(before, after),
      previousText: before,
      candidateText: after,
      docText: before.replace('- Old rule.', '- Old rule, in my words.'),
    });
    s.begin();
    assert.equal(s.placedOwners().length, 0);
    assert.equal(s.withFate('conflict').length, 1);
    assert.match(
      whyNoEffect(s, { kind: 'whole', accept: true, fromDiff: false }) ?? '',
      /epoch 1 slow update could not be shown in this editor.*Open in Diff View/,
    );
    assert.equal(whyNoEffect(s, { kind: 'whole', accept: true, fromDiff: true }), undefined);
  });

  it('keeps the previous text when the document has the block, or the block is not empty', () => {
    assert.equal(previousForDocument(previous, previous), previous);
    assert.equal(previousForDocument(slowCandidate, raw), slowCandidate);
    assert.equal(previousForDocument(previous, raw), `${raw.trimEnd()}\n`);
    const withAppendix = injectEmptyAppendix(raw);
    assert.equal(previousForDocument(withAppendix, raw), `${raw.trimEnd()}\n`);
    assert.notEqual(
      previousForDocument(replaceAppendix(withAppendix, ['a note']), raw),
      `${raw.trimEnd()}\n`,
    );
  });
});

const edit: CandidateEdit = {
  id: 'e1',
  op: 'append',
  content: '- Prefix money amounts with the currency symbol.',
  status: 'applied',
};
const stepCandidate = `${raw.trimEnd()}\n${edit.content}\n`;

function step(mode: ReviewMode, live: boolean): ReviewSession {
  return ReviewSession.create({
    runId: 'run-1',
    step: 2,
    epoch: 1,
    origin: 'step',
    mode,
    live,
    edits: [edit],
    hunks: lineHunks(raw, stepCandidate),
    previousText: raw,
    candidateText: stepCandidate,
    docText: raw,
  });
}

describe('review outcomes: every Accept / Reject changes something or says why not', () => {
  it('names an edit that is already decided, and a review that is over', () => {
    const s = step('auto', false);
    s.begin();
    assert.equal(whyNoEffect(s, { kind: 'edit', editId: 'e1', accept: true }), undefined);
    s.decide(['e1'], true);
    assert.equal(s.phase, 'done');
    assert.match(
      whyNoEffect(s, { kind: 'edit', editId: 'e1', accept: false }) ?? '',
      /step 2 is already decided/,
    );
    assert.match(whyNoEffect(s, { kind: 'whole', accept: true, fromDiff: true }) ?? '', /already decided/);
  });

  it('sends per-edit clicks on a candidate the gate judged whole to the candidate buttons', () => {
    const s = step('gate-then-human', true);
    s.begin();
    s.onReviewRequested('q-1', 'after_gate', { candidateScore: 0.8, currentScore: 0.5 });
    assert.match(
      whyNoEffect(s, { kind: 'edit', editId: 'e1', accept: true }) ?? '',
      /judged step 2 as a whole; use Accept Candidate/,
    );
    assert.equal(whyNoEffect(s, { kind: 'whole', accept: true, fromDiff: false }), undefined);
  });
});

describe('review outcomes: a review whose run ended', () => {
  it('waits on its run while the gate scores or the engine asks, and not once decided', () => {
    const gate = step('auto', true);
    gate.begin();
    assert.equal(gate.phase, 'awaiting-gate');
    assert.ok(waitsOnRun(gate));
    const asked = step('human-first', true);
    asked.begin();
    asked.onReviewRequested('q-1', 'before_gate');
    assert.ok(waitsOnRun(asked));
    // Kept edits go to the gate: the review still waits on the run until its verdict.
    asked.acceptCandidate();
    assert.equal(asked.phase, 'awaiting-gate');
    assert.ok(waitsOnRun(asked));
    const rejected = step('human-first', true);
    rejected.begin();
    rejected.onReviewRequested('q-1', 'before_gate');
    rejected.rejectCandidate();
    assert.equal(waitsOnRun(rejected), false);
    const offline = step('auto', false);
    offline.begin();
    assert.equal(waitsOnRun(offline), false);
  });

  it('reads as the run having stopped, with what to do', () => {
    const s = step('auto', true);
    s.begin();
    const e = endedReviewOf(s, 'stopped');
    assert.equal(e.key, s.key);
    assert.match(endedTitle(e), /step 2: the run stopped before it was decided/);
    assert.doesNotMatch(endedTitle(e), /gate is scoring/);
    assert.match(
      endedMessage(endedReviewOf(s, 'failed')),
      /run failed before step 2 was decided.*Resume the run/,
    );
    assert.match(
      endedTitle(endedReviewOf(s, 'interrupted')),
      /step 2: the run was interrupted \(the engine stopped\) before it was decided/,
    );
  });
});

describe('review outcomes: lines a review put in the document', () => {
  it('owns its proposed lines while open, and none once decided', () => {
    const s = step('auto', false);
    const shown = applyLineOps(raw, s.begin().ops).split('\n');
    const at = shown.indexOf(edit.content!);
    assert.ok(at > 0);
    assert.ok(reviewOwnsLine(s, at));
    assert.equal(reviewOwnsLine(s, 0), false, "the skill text around it is not the review's");
    s.acceptCandidate();
    assert.equal(reviewOwnsLine(s, at), false);
  });
});
