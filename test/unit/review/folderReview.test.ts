/**
 * A skill folder's candidate reviewed file by file: the engine's candidate_files.json read back,
 * one review per changed file (a new file against an empty document), and one decision for the
 * whole candidate once every file's review is decided.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyEdits, assignEditIds } from '../../../src/engine/skill/applyEdits';
import { lineHunks } from '../../../src/engine/skill/hunks';
import { readCandidateFiles, recordCandidateFiles } from '../../../src/engine/skill/package/changes';
import { joinPackage, skillBody } from '../../../src/engine/skill/package/text';
import { toCandidateEdits } from '../../../src/engine/train/gateCandidate';
import { editsOfFile } from '../../../src/extension/review/layout';
import { mergeDecisions, ReviewGroup } from '../../../src/extension/review/reviewGroup';
import { otherCandidateFiles, otherFilesOfCandidate } from '../../../src/extension/review/runFiles';
import { applyLineOps, ReviewSession, type Transition } from '../../../src/extension/review/session';
import type { CandidateEdit } from '../../../src/protocol/events';
import type { ReviewMode } from '../../../src/protocol/vocabulary';

const skill = '# Skill\n\nAnswer briefly.\n\n## Rules\n\n- Use the style guide in references/guide.md.\n';
const guide = '# Guide\n\nAnswers are pasted into forms.\n';
const previous = joinPackage({ skill, files: [{ path: 'references/guide.md', text: guide }], readOnly: [] });

const raw = [
  { op: 'append', content: '- Quote amounts with their currency symbol.' },
  { op: 'append', file: 'references/guide.md', content: 'Dates are written as YYYY-MM-DD.' },
  { op: 'append', file: 'references/units.md', content: '# Units\n\nMetres, never feet.' },
];
const withIds = assignEditIds(raw.map((e) => ({ ...e })));
const applied = applyEdits(previous, withIds);
const candidate = applied.text;
const edits: CandidateEdit[] = toCandidateEdits(withIds, applied.report);

/** A run folder holding one step's candidate as the engine writes it. */
function stepFolder(): { runDir: string; candidatePath: string; cleanup(): void } {
  const runDir = mkdtempSync(join(tmpdir(), 'skillopt-folder-review-'));
  const stepDir = join(runDir, 'steps', 'step_0001');
  mkdirSync(stepDir, { recursive: true });
  const candidatePath = join(stepDir, 'candidate_skill.md');
  writeFileSync(candidatePath, skillBody(candidate));
  writeFileSync(join(runDir, 'history.json'), JSON.stringify([{ step: 1, epoch: 1, action: 'reject' }]));
  recordCandidateFiles(candidatePath, previous, candidate);
  return { runDir, candidatePath, cleanup: () => rmSync(runDir, { recursive: true, force: true }) };
}

function fileSession(
  f: { path: string; before: string; after: string },
  doc: string,
  mode: ReviewMode = 'human-first',
): ReviewSession {
  return ReviewSession.create({
    runId: 'run',
    step: 1,
    epoch: 1,
    origin: 'step',
    mode,
    live: true,
    file: f.path,
    edits: editsOfFile(edits, f.path),
    hunks: lineHunks(f.before, f.after),
    previousText: f.before,
    candidateText: f.after,
    docText: doc,
  });
}

describe('review of a skill folder candidate', () => {
  it('reads the changed files the engine recorded, SKILL.md apart, a new file against nothing', () => {
    const run = stepFolder();
    try {
      assert.deepEqual(
        readCandidateFiles(run.candidatePath)?.map((f) => [f.path, f.status]),
        [
          ['SKILL.md', 'changed'],
          ['references/guide.md', 'changed'],
          ['references/units.md', 'added'],
        ],
      );
      const others = otherFilesOfCandidate(run.candidatePath);
      assert.deepEqual(
        others.map((f) => f.path),
        ['references/guide.md', 'references/units.md'],
      );
      assert.equal(others[1]!.before, '');
      assert.deepEqual(otherCandidateFiles(run.runDir, 1, 'step'), others);
      assert.equal(readCandidateFiles(join(run.runDir, 'missing', 'candidate_skill.md')), undefined);
    } finally {
      run.cleanup();
    }
  });

  it('gives each file its own edits: accepting every file gives the candidate, rejecting keeps each file', () => {
    const run = stepFolder();
    try {
      const files = otherFilesOfCandidate(run.candidatePath);
      for (const f of files) {
        const own = editsOfFile(edits, f.path);
        assert.equal(own.length, 1, `one edit names ${f.path}`);
        const s = fileSession(f, f.before);
        assert.deepEqual(s.placedOwners(), [own[0]!.id], `${f.path}'s edit is traced to its own lines`);
        let doc = applyLineOps(f.before, s.begin().ops);
        const accepted = s.acceptCandidate();
        doc = applyLineOps(doc, accepted.ops);
        assert.equal(doc, f.after, `${f.path} holds the candidate's text after Accept`);

        const r = fileSession(f, f.before);
        let kept = applyLineOps(f.before, r.begin().ops);
        kept = applyLineOps(kept, r.rejectCandidate().ops);
        assert.equal(kept, f.before, `${f.path} is untouched after Reject`);
      }
      // SKILL.md's own review sees only the edit without a file.
      assert.deepEqual(
        editsOfFile(edits).map((e) => e.op),
        ['append'],
      );
    } finally {
      run.cleanup();
    }
  });

  it('sends one decision for the candidate once every file is decided', () => {
    const run = stepFolder();
    try {
      const files = otherFilesOfCandidate(run.candidatePath);
      const g = files[0]!;
      const u = files[1]!;
      const group = new ReviewGroup<{ session: ReviewSession }>(undefined);
      const a = { session: fileSession(g, g.before) };
      const b = { session: fileSession(u, u.before) };
      group.add(a);
      group.add(b);
      a.session.begin();
      b.session.begin();
      const first: Transition = a.session.decide(a.session.placedOwners(), true);
      assert.ok(first.send, 'the file alone would answer the engine');
      assert.equal(group.hold(a, first.send, true), undefined, 'held while another file is under review');
      const second = b.session.decide(b.session.placedOwners(), false, 'no unit file');
      const merged = group.hold(b, second.send!, true);
      assert.ok(merged?.send);
      assert.deepEqual(
        merged.params.decisions.map((d) => [d.editId, d.accept]),
        [
          [editsOfFile(edits, g.path)[0]!.id, true],
          [editsOfFile(edits, u.path)[0]!.id, false],
        ],
      );
      // human-first answers per edit: there is no candidate decision before the gate.
      assert.equal(merged.params.candidate, undefined);
    } finally {
      run.cleanup();
    }
  });

  it('merges the candidate decision only when every file agrees', () => {
    const d = (candidate?: 'accept' | 'reject', reason?: string) => ({
      runId: 'r',
      step: 2,
      decisions: [{ editId: `e${candidate ?? 'none'}`, accept: candidate !== 'reject' }],
      ...(candidate ? { candidate } : {}),
      ...(reason ? { reason } : {}),
    });
    assert.equal(mergeDecisions([d('accept'), d('accept')])?.candidate, 'accept');
    assert.equal(mergeDecisions([d('accept'), d('reject')])?.candidate, undefined);
    assert.equal(mergeDecisions([d('accept'), d()])?.candidate, undefined);
    const rejected = mergeDecisions([d('reject'), d('reject', 'too long')]);
    assert.deepEqual(
      [rejected?.candidate, rejected?.reason, rejected?.decisions.length],
      ['reject', 'too long', 2],
    );
    assert.equal(mergeDecisions([]), undefined);
  });
});
