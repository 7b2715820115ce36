import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { EngineEvent } from '../../../src/protocol/events';
import { skillHash } from '../../../src/engine/skill/document';
import {
  listCandidates,
  runDirOfCandidate,
  stepCandidateFromFolder,
} from '../../../src/extension/review/runFiles';
import { applyLineOps, ReviewSession } from '../../../src/extension/review/session';
import { prepareSim, runSim, tempDir } from '../train/helpers';

type Ready = Extract<EngineEvent, { type: 'candidate/ready' }>;

const pythonRun = join(__dirname, '../../fixtures/skillopt-python-run');

describe('review run files: candidates read back from a run folder', function () {
  this.timeout(60_000);
  const tmp = tempDir('skillopt-review-run-');
  let live: Ready[] = [];
  let verdicts: Array<Extract<EngineEvent, { type: 'gate/verdict' }>> = [];

  before(async () => {
    const { events } = await runSim(prepareSim(tmp.path));
    live = events.filter((e): e is Ready => e.type === 'candidate/ready');
    verdicts = events.filter(
      (e): e is Extract<EngineEvent, { type: 'gate/verdict' }> => e.type === 'gate/verdict',
    );
    assert.ok(live.length >= 3, 'the sim run proposes candidates');
  });
  after(() => tmp.cleanup());

  it('rebuilds every live candidate/ready event from the folder: same edits, hunks and hashes', () => {
    for (const ev of live) {
      const got = stepCandidateFromFolder(tmp.path, ev.step, ev.origin);
      assert.ok(got, `step ${ev.step} ${ev.origin}`);
      assert.equal(skillHash(got.candidateText), ev.candidateHash);
      assert.equal(got.event.previousHash, ev.previousHash, `previous of step ${ev.step} ${ev.origin}`);
      assert.deepEqual(got.event.hunks, ev.hunks);
      assert.deepEqual(got.event.edits, ev.edits);
      assert.equal(runDirOfCandidate(ev.candidatePath), tmp.path);
    }
  });

  it('carries the gate verdict the run recorded', () => {
    for (const v of verdicts.filter((x) => x.origin === 'step')) {
      const got = stepCandidateFromFolder(tmp.path, v.step, 'step');
      assert.equal(got?.verdict?.action, v.action, `step ${v.step}`);
      assert.equal(got?.verdict?.candidateScore, v.candidateScore);
    }
  });

  it('lists steps and slow updates in order', () => {
    const list = listCandidates(tmp.path).map((c) => `${c.step}:${c.origin}`);
    assert.deepEqual(
      list,
      live.map((e) => `${e.step}:${e.origin}`),
    );
  });

  it('reviews every sim candidate: Accept All reaches the candidate, Reject All the previous skill', () => {
    for (const ev of live) {
      const got = stepCandidateFromFolder(tmp.path, ev.step, ev.origin)!;
      for (const accept of [true, false]) {
        const s = ReviewSession.create({
          runId: tmp.path,
          step: ev.step,
          epoch: ev.epoch,
          origin: ev.origin,
          mode: 'human-first',
          live: false,
          edits: got.event.edits,
          hunks: got.event.hunks,
          previousText: got.previousText,
          candidateText: got.candidateText,
          docText: got.previousText,
        });
        let text = applyLineOps(got.previousText, s.begin().ops);
        text = applyLineOps(text, (accept ? s.acceptCandidate() : s.rejectCandidate()).ops);
        assert.equal(
          text,
          accept ? got.candidateText : got.previousText,
          `step ${ev.step} ${ev.origin} accept=${accept}`,
        );
      }
    }
  });
});

describe('review run files: a Python reference run folder', () => {
  it('gives its edits stable ids and the apply statuses', () => {
    const got = stepCandidateFromFolder(pythonRun, 1, 'step');
    assert.ok(got);
    assert.equal(got.event.edits.length, 3);
    assert.deepEqual(
      got.event.edits.map((e) => [e.op, e.status, e.support_count, e.source_type]),
      [
        ['append', 'applied_append', 1, 'success'],
        ['insert_after', 'applied_insert_after', 8, 'failure'],
        ['append', 'applied_append', 8, 'failure'],
      ],
    );
    for (const e of got.event.edits) assert.match(e.id, /^e-[0-9a-f]{10}$/);
    assert.equal(got.verdict?.action, 'accept_new_best');
    // Same ids on every read: the review addresses edits by them.
    assert.deepEqual(
      stepCandidateFromFolder(pythonRun, 1, 'step')?.event.edits.map((e) => e.id),
      got.event.edits.map((e) => e.id),
    );
  });
});
