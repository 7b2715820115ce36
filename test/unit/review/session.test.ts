import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CandidateEdit } from '../../../src/protocol/events';
import { applyEdits, assignEditIds } from '../../../src/engine/skill/applyEdits';
import { injectEmptySlowUpdate } from '../../../src/engine/skill/document';
import { lineHunks } from '../../../src/engine/skill/hunks';
import { applyLineOps, ReviewSession, type Transition } from '../../../src/extension/review/session';
import type { ReviewMode } from '../../../src/protocol/vocabulary';
import type { TextChange } from '../../../src/extension/review/tracking';

const previous = injectEmptySlowUpdate(
  readFileSync(join(__dirname, '../../../examples/house-style/SKILL.md'), 'utf8'),
);

const rawEdits = [
  { op: 'append', content: '- Prefix money amounts with the currency symbol, e.g. $15.75.' },
  { op: 'insert_after', target: '## Rules', content: '- Write dates as YYYY-MM-DD.' },
  { op: 'replace', target: 'with no explanation', content: 'with no explanation and no quotes' },
  { op: 'replace', target: 'no such text', content: 'never applied' },
];

function build(raw: Array<{ op: string; target?: string; content?: string }>): {
  edits: CandidateEdit[];
  candidate: string;
} {
  const withIds = assignEditIds(raw.map((e) => ({ ...e })));
  const { text, report } = applyEdits(previous, withIds);
  return {
    candidate: text,
    edits: withIds.map((e, i) => ({
      id: String(e.id),
      op: String(e.op),
      ...(e.target !== undefined ? { target: String(e.target) } : {}),
      ...(e.content !== undefined ? { content: String(e.content) } : {}),
      support_count: 2,
      source_type: 'failure',
      status: report[i]!.status,
    })),
  };
}

const { edits, candidate } = build(rawEdits);
const [money, dates, quotes, missing] = edits.map((e) => e.id) as [string, string, string, string];

/** The document the session edits, kept in step with every transition. */
class Doc {
  constructor(public text: string) {}
  run(t: Transition): Transition {
    this.text = applyLineOps(this.text, t.ops);
    return t;
  }
  /** The person types: apply to the text and tell the session. */
  type(s: ReviewSession, c: TextChange): string[] {
    const lines = this.text.split('\n');
    const before =
      lines.slice(0, c.startLine).join('\n') +
      (c.startLine > 0 ? '\n' : '') +
      lines[c.startLine]!.slice(0, c.startChar);
    const afterLine = lines[c.endLine] ?? '';
    const after =
      afterLine.slice(c.endChar) +
      (c.endLine + 1 < lines.length ? '\n' + lines.slice(c.endLine + 1).join('\n') : '');
    this.text = before + c.text + after;
    const lost = s.applyTextChange(c);
    s.refreshLines(this.text.split('\n'));
    return lost;
  }
}

function session(mode: ReviewMode, live: boolean, docText = previous): { s: ReviewSession; doc: Doc } {
  const s = ReviewSession.create({
    runId: 'run-1',
    step: 3,
    epoch: 1,
    origin: 'step',
    mode,
    live,
    edits,
    hunks: lineHunks(previous, candidate),
    previousText: previous,
    candidateText: candidate,
    docText,
  });
  return { s, doc: new Doc(docText) };
}

describe('review session: offline review of a run folder candidate', () => {
  it('shows removed and added lines together, then Accept All gives exactly the candidate', () => {
    const { s, doc } = session('auto', false);
    assert.deepEqual(s.withFate('skipped'), [missing]);
    doc.run(s.begin());
    assert.equal(s.phase, 'review');
    const merged = doc.text.split('\n');
    assert.ok(merged.includes('- Give only the final answer, with no explanation.'), 'old line still there');
    assert.ok(
      merged.includes('- Give only the final answer, with no explanation and no quotes.'),
      'new line shown',
    );
    const added = s.allSegments().filter((x) => x.kind === 'added' && x.present);
    for (const seg of added)
      assert.deepEqual(merged.slice(seg.start, seg.start + seg.lines.length), seg.lines);
    const t = doc.run(s.acceptCandidate());
    assert.equal(doc.text, candidate);
    assert.equal(t.send, undefined, 'nothing is sent for a finished run');
    // ...but the decision still goes into the run's history.
    assert.equal(t.record?.candidate, 'accept');
    assert.deepEqual(
      t.record?.decisions.map((d) => [d.editId, d.accept]).sort(),
      [money, dates, quotes].map((id) => [id, true]).sort(),
    );
    assert.equal(s.phase, 'done');
  });

  it('records the rejection of a finished run’s candidate with its reason, and sends nothing', () => {
    const { s, doc } = session('auto', false);
    doc.run(s.begin());
    const t = doc.run(s.rejectCandidate('made the dates worse'));
    assert.equal(doc.text, previous);
    assert.equal(t.send, undefined);
    assert.equal(t.record?.candidate, 'reject');
    assert.equal(t.record?.reason, 'made the dates worse');
  });

  it('Reject All gives back exactly the previous text', () => {
    const { s, doc } = session('gate-then-human', false);
    doc.run(s.begin());
    doc.run(s.rejectCandidate());
    assert.equal(doc.text, previous);
  });

  it('accepting one edit and rejecting the others equals applying that edit alone', () => {
    for (const keep of [money, dates, quotes]) {
      const { s, doc } = session('human-first', false);
      doc.run(s.begin());
      doc.run(s.decide([keep], true));
      assert.equal(s.phase, 'review');
      doc.run(
        s.decide(
          [money, dates, quotes].filter((id) => id !== keep),
          false,
          'not needed',
        ),
      );
      const alone = applyEdits(previous, [rawEdits[[money, dates, quotes].indexOf(keep)]!]).text;
      assert.equal(doc.text, alone, `only ${keep}`);
      assert.equal(s.phase, 'done');
      assert.equal(s.owners.get(keep)?.fate, 'accepted');
    }
  });
});

describe('review session: live review modes', () => {
  it('auto: waits for the gate, applies an accepted candidate, and the person can revert it', () => {
    const { s, doc } = session('auto', true);
    assert.deepEqual(doc.run(s.begin()).ops, []);
    assert.equal(s.phase, 'awaiting-gate');
    doc.run(
      s.onVerdict({
        accepted: true,
        action: 'accept_new_best',
        candidateScore: 0.9,
        currentScore: 0.9,
        bestScore: 0.9,
      }),
    );
    assert.equal(doc.text, candidate);
    assert.equal(s.phase, 'verdict');
    assert.deepEqual(
      s
        .ownerList()
        .filter((o) => o.decidedBy === 'gate')
        .map((o) => o.id)
        .sort(),
      [money, dates, quotes].sort(),
    );
    const t = doc.run(s.rejectCandidate('made answers longer'));
    assert.equal(doc.text, previous);
    assert.deepEqual(t.send, {
      runId: 'run-1',
      step: 3,
      candidate: 'reject',
      reason: 'made answers longer',
      decisions: [...s.owners.keys()]
        .filter((id) => id !== missing)
        .map((editId) => ({ editId, accept: false, reason: 'made answers longer' })),
    });
  });

  it('auto: a gate rejection leaves the document alone and Accept Anyway applies the candidate', () => {
    const { s, doc } = session('auto', true);
    doc.run(s.begin());
    doc.run(
      s.onVerdict({
        accepted: false,
        action: 'reject',
        candidateScore: 0.5,
        currentScore: 0.6,
        bestScore: 0.6,
      }),
    );
    assert.equal(doc.text, previous);
    assert.equal(s.owners.get(money)?.fate, 'rejected');
    assert.equal(s.owners.get(money)?.decidedBy, 'gate');
    const t = doc.run(s.acceptCandidate());
    assert.equal(doc.text, candidate);
    assert.equal(t.send?.candidate, 'accept');
    assert.ok(t.send?.decisions.every((d) => d.accept));
  });

  it('gate-then-human: the person answers when the engine asks after the gate, for the whole candidate', () => {
    const { s, doc } = session('gate-then-human', true);
    doc.run(s.begin());
    assert.equal(s.phase, 'awaiting-gate');
    doc.run(s.onReviewRequested('q-1', 'after_gate', { candidateScore: 0.9, currentScore: 0.8 }));
    assert.equal(s.phase, 'review');
    assert.equal(s.waiting, true);
    assert.equal(s.perEdit, false, 'the gate judged the candidate as a whole');
    assert.deepEqual(s.gateScores, { candidateScore: 0.9, currentScore: 0.8 });
    assert.notEqual(doc.text, candidate);
    assert.deepEqual(doc.run(s.decide([dates], true)).ops, [], 'no per-edit decisions');
    const t = doc.run(s.rejectCandidate('too wordy'));
    assert.equal(doc.text, previous);
    assert.equal(s.waiting, false);
    assert.deepEqual(t.send, {
      runId: 'run-1',
      step: 3,
      questionId: 'q-1',
      decisions: [...s.owners.keys()]
        .filter((id) => id !== missing)
        .map((editId) => ({ editId, accept: false, reason: 'too wordy' })),
      candidate: 'reject',
      reason: 'too wordy',
    });
    assert.equal(s.phase, 'done');
  });

  it('gate-then-human: Accept Candidate sends candidate accept and applies it', () => {
    const { s, doc } = session('gate-then-human', true);
    doc.run(s.begin());
    doc.run(s.onReviewRequested('q-1', 'after_gate', { candidateScore: 0.9, currentScore: 0.8 }));
    const t = doc.run(s.acceptCandidate());
    assert.equal(t.send?.candidate, 'accept');
    assert.equal(t.send?.questionId, 'q-1', 'the answer names the question it answers');
    assert.equal(t.send?.reason, undefined);
    assert.equal(doc.text, candidate);
  });

  it('human-first: an answer the run refused as stale puts the review back as drawn, waiting per edit', () => {
    const { s, doc } = session('human-first', true);
    doc.run(s.begin());
    doc.run(s.onReviewRequested('q-old', 'before_gate'));
    const drawn = doc.text;
    doc.run(s.decide([money, quotes], false, 'not needed'));
    const answered = doc.run(s.decide([dates], true));
    assert.equal(answered.send?.questionId, 'q-old');
    assert.equal(s.phase, 'awaiting-gate', 'the kept edit went to the gate');
    assert.notEqual(doc.text, drawn);
    // The engine refused it: the run asks step 3 again, under a new question.
    doc.run(s.answerRefused('q-new'));
    assert.equal(doc.text, drawn, 'the refused answer’s lines are gone; both sides of every edit show');
    assert.equal(s.phase, 'review');
    assert.equal(s.waiting, true);
    assert.ok(s.perEdit);
    assert.deepEqual(s.withFate('pending').sort(), [money, dates, quotes].sort());
    assert.ok(
      s.ownerList().every((o) => o.decidedBy === undefined && o.reason === undefined),
      'no refused decision stays on an edit',
    );
    doc.run(s.decide([money, dates], true));
    const again = doc.run(s.decide([quotes], false));
    assert.equal(again.send?.questionId, 'q-new', 'the new answer names the question asked now');
    assert.deepEqual(
      again.send?.decisions.map((d) => [d.editId, d.accept]).sort(),
      [
        [dates, true],
        [money, true],
        [quotes, false],
      ].sort(),
    );
  });

  it('gate-then-human: a refused Accept Candidate shows the candidate for a decision again', () => {
    const { s, doc } = session('gate-then-human', true);
    doc.run(s.begin());
    doc.run(s.onReviewRequested('q-1', 'after_gate', { candidateScore: 0.9, currentScore: 0.8 }));
    const drawn = doc.text;
    doc.run(s.acceptCandidate());
    assert.equal(doc.text, candidate);
    doc.run(s.answerRefused(undefined));
    assert.equal(doc.text, drawn);
    assert.equal(s.phase, 'review');
    assert.equal(s.gateScores?.candidateScore, 0.9, 'the gate’s scores still show');
    const t = doc.run(s.rejectCandidate('too long'));
    assert.equal(t.send?.candidate, 'reject');
    assert.equal(t.send?.questionId, undefined, 'no question named that the run did not ask');
    assert.equal(doc.text, previous);
  });

  it('gate-then-human: a gate rejection never asks the person and shows the verdict', () => {
    const { s, doc } = session('gate-then-human', true);
    doc.run(s.begin());
    doc.run(
      s.onVerdict({
        accepted: false,
        action: 'reject',
        candidateScore: 0.5,
        currentScore: 0.6,
        bestScore: 0.6,
      }),
    );
    assert.equal(s.phase, 'verdict');
    assert.equal(doc.text, previous);
    assert.equal(s.owners.get(dates)?.decidedBy, 'gate');
  });

  it('human-first: the person prunes first; a gate rejection of the kept edits reverts them', () => {
    const { s, doc } = session('human-first', true);
    doc.run(s.begin());
    assert.equal(s.phase, 'review');
    doc.run(s.onReviewRequested('q-1', 'before_gate'));
    assert.equal(s.waiting, true);
    doc.run(s.decide([money, quotes], false));
    const t = doc.run(s.decide([dates], true));
    assert.equal(t.send?.candidate, undefined, 'no gate has run yet');
    assert.equal(t.send?.questionId, 'q-1');
    assert.deepEqual(
      t.send?.decisions.map((d) => [d.editId, d.accept]),
      [...s.owners.keys()].filter((id) => id !== missing).map((id) => [id, id === dates]),
    );
    assert.equal(s.phase, 'awaiting-gate');
    const kept = doc.text;
    doc.run(
      s.onVerdict({
        accepted: false,
        action: 'reject',
        candidateScore: 0.5,
        currentScore: 0.6,
        bestScore: 0.6,
      }),
    );
    assert.equal(doc.text, previous);
    assert.equal(s.owners.get(dates)?.decidedBy, 'gate');
    const over = doc.run(s.acceptCandidate());
    assert.notEqual(doc.text, kept, 'Keep Anyway applies every edit, not only the kept one');
    assert.equal(
      over.send?.questionId,
      undefined,
      'an overrule answers no question: the one asked was answered',
    );
  });

  it('human-first: an answer given before the question arrives waits for it and names it', () => {
    const { s, doc } = session('human-first', true);
    doc.run(s.begin());
    doc.run(s.decide([money, quotes], false));
    const early = doc.run(s.decide([dates], true));
    assert.ok(early.send);
    assert.equal(s.holdUntilAsked(early.send), true, 'nothing is sent before the engine has asked');
    assert.equal(s.phase, 'awaiting-gate');
    const asked = doc.run(s.onReviewRequested('q-1', 'before_gate'));
    assert.equal(asked.send?.questionId, 'q-1', 'the held answer names the question it was shown for');
    assert.deepEqual(
      asked.send?.decisions.map((d) => [d.editId, d.accept]),
      [...s.owners.keys()].filter((id) => id !== missing).map((id) => [id, id === dates]),
    );
    assert.equal(s.waiting, false, 'the answer is given: the run does not wait for the person');
    assert.equal(s.phase, 'awaiting-gate');
    assert.equal(s.holdUntilAsked(early.send), false, 'once asked, an answer goes out at once');
  });

  it('starts on the candidate when the document already holds it', () => {
    const { s, doc } = session('human-first', true, candidate);
    assert.equal(s.startedOnCandidate, true);
    assert.equal(s.phase, 'awaiting-gate');
    doc.run(
      s.onVerdict({
        accepted: false,
        action: 'reject',
        candidateScore: 0.5,
        currentScore: 0.6,
        bestScore: 0.6,
      }),
    );
    assert.equal(doc.text, candidate, 'human-first reverts only edits the person kept in this session');
  });
});

describe('review session: the person types during a review', () => {
  it('keeps accept working after lines are added above the changes', () => {
    const { s, doc } = session('auto', false);
    doc.run(s.begin());
    doc.type(s, { startLine: 5, startChar: 0, endLine: 5, endChar: 0, text: 'A new intro line.\n' });
    doc.run(s.acceptCandidate());
    const lines = candidate.split('\n');
    lines.splice(5, 0, 'A new intro line.');
    assert.equal(doc.text, lines.join('\n'));
  });

  it('keeps what the person typed inside a proposed line when they accept it', () => {
    const { s, doc } = session('auto', false);
    doc.run(s.begin());
    const seg = s.segmentsOf(dates).find((x) => x.kind === 'added')!;
    const line = doc.text.split('\n')[seg.start]!;
    doc.type(s, {
      startLine: seg.start,
      startChar: line.length,
      endLine: seg.start,
      endChar: line.length,
      text: ' Always.',
    });
    doc.run(s.decide([dates], true));
    assert.ok(doc.text.includes('- Write dates as YYYY-MM-DD. Always.'));
  });

  it('drops an edit whose lines the person rewrote across its edge', () => {
    const { s, doc } = session('auto', false);
    doc.run(s.begin());
    const removed = s.segmentsOf(quotes).find((x) => x.kind === 'removed')!;
    const added = s.segmentsOf(quotes).find((x) => x.kind === 'added')!;
    assert.equal(added.start, removed.start + 1, 'the new line follows the old one');
    // Select from the middle of the old line into the new one and type over it.
    const lost = doc.type(s, {
      startLine: removed.start,
      startChar: 8,
      endLine: added.start,
      endChar: 4,
      text: 'X',
    });
    assert.deepEqual(lost, [quotes]);
    assert.equal(s.owners.get(quotes)?.fate, 'invalidated');
    doc.run(s.acceptCandidate());
    assert.ok(doc.text.includes('- Write dates as YYYY-MM-DD.'));
  });
});
