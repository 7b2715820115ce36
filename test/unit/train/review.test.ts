import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { trainPrepared } from '../../../src/engine/run';
import type { Overrule, ReviewDecision, Reviewer, ReviewRequest } from '../../../src/engine/train/review';
import type { RuntimeState, StepBufferEntry, StepRecord } from '../../../src/protocol/records';
import { prepareSim, read, readJson, recordRequests, tempDir } from './helpers';

class ScriptedReviewer implements Reviewer {
  readonly seen: ReviewRequest[] = [];
  constructor(
    private readonly decide: (r: ReviewRequest) => ReviewDecision,
    private readonly overrules: Overrule[][] = [],
  ) {}
  review(r: ReviewRequest): Promise<ReviewDecision> {
    this.seen.push(r);
    return Promise.resolve(this.decide(r));
  }
  takeOverrules(): Overrule[] {
    return this.overrules.shift() ?? [];
  }
}

async function train(outDir: string, mode: string, reviewer: Reviewer, extra: string[] = []): Promise<void> {
  const prepared = prepareSim(outDir, [`review.mode=${mode}`, ...extra]);
  const seen = recordRequests(prepared);
  await trainPrepared(prepared, {
    emit: () => undefined,
    signal: new AbortController().signal,
    resumeCommand: '',
    reviewer,
  });
  (train as { last?: typeof seen }).last = seen;
}

describe('review modes (engine side)', function () {
  this.timeout(60_000);
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir('skillopt-review-');
  });
  afterEach(() => dir.cleanup());

  it('human-first: only the kept edits are gated, and turned-down edits reach the optimizer with the reason', async () => {
    const reviewer = new ScriptedReviewer((r) => ({
      edits: r.edits.map((e, i) => ({
        editId: e.id,
        accept: i !== 0,
        ...(i === 0 ? { reason: 'too vague' } : {}),
      })),
    }));
    await train(dir.path, 'human-first', reviewer);
    assert.ok(reviewer.seen.length > 0);
    assert.ok(reviewer.seen.every((r) => r.phase === 'before_gate'));
    const history = readJson<StepRecord[]>(dir.path, 'history.json');
    const first = history.find((r) => r.step === reviewer.seen[0]!.step)!;
    assert.equal(first.review?.decision, 'human_pruned');
    assert.deepEqual(first.review?.rejected_edits, [
      { id: reviewer.seen[0]!.edits[0]!.id, reason: 'too vague' },
    ]);
    const stepDir = join(dir.path, 'steps', `step_${String(first.step).padStart(4, '0')}`);
    assert.ok(existsSync(join(stepDir, 'candidate_skill.reviewed.md')));
    const digest = readJson<StepBufferEntry>(stepDir, 'trajectory_digest.json');
    assert.ok(digest.rejected_edits?.some((e) => e.human === true && e.reason === 'too vague'));
    const later = (
      (train as { last?: Array<{ stage: string; messages: Array<{ content: string }> }> }).last ?? []
    ).filter(
      (r) =>
        r.stage === 'analyst' &&
        r.messages.some((m) => m.content.includes('turned down by the person: too vague')),
    );
    assert.ok(later.length > 0, 'the person’s reason never reached an analyst prompt');
  });

  it('gate-then-human: the person can turn down a candidate the gate accepted', async () => {
    const reviewer = new ScriptedReviewer((r) =>
      r.step === 1 ? { candidate: 'reject', reason: 'not our style' } : { candidate: 'accept' },
    );
    await train(dir.path, 'gate-then-human', reviewer);
    assert.ok(reviewer.seen.every((r) => r.phase === 'after_gate' && typeof r.candidateScore === 'number'));
    const history = readJson<StepRecord[]>(dir.path, 'history.json');
    assert.equal(history[0]!.action, 'reject');
    assert.equal(history[0]!.review?.decision, 'human_reject');
    assert.equal(history[0]!.review?.gate_action, 'accept_new_best');
    assert.ok(
      history.slice(1).some((r) => r.review?.decision === 'human_accept' && r.action.startsWith('accept')),
    );
  });

  it('gate-then-human with on_inconclusive: ask: the person decides a candidate the paired gate could not tell from noise', async () => {
    const reviewer = new ScriptedReviewer(() => ({ candidate: 'accept' }));
    await train(dir.path, 'gate-then-human', reviewer, [
      'evaluation.gate_test=paired',
      'evaluation.on_inconclusive=ask',
      'optimizer.use_meta_reflect=true',
    ]);
    // Every question carries the test it rests on.
    assert.ok(reviewer.seen.length > 0 && reviewer.seen.every((r) => r.gateTest !== undefined));
    const asked = reviewer.seen.filter((r) => r.gateTest!.verdict === 'inconclusive');
    assert.ok(asked.length > 0, 'no inconclusive verdict was put to the person');
    const history = readJson<StepRecord[]>(dir.path, 'history.json');
    const kept = history.filter((r) => r.review?.gate_action === 'inconclusive');
    assert.ok(kept.length > 0);
    for (const r of kept) {
      assert.equal(r.review?.decision, 'human_accept');
      assert.ok(r.action === 'accept' || r.action === 'accept_new_best', r.action);
    }
  });

  it('auto: the person may overrule a finished step; it is recorded as a human decision', async () => {
    const reviewer = new ScriptedReviewer(
      () => ({}),
      [[], [{ step: 1, decision: 'revert', reason: 'regressed in production' }]],
    );
    await train(dir.path, 'auto', reviewer, ['train.num_epochs=1']);
    assert.equal(reviewer.seen.length, 0, 'auto mode never waits for the person');
    const log = readJson<Array<{ step: number; decision: string; applied_after_step: number }>>(
      dir.path,
      'human_decisions.json',
    );
    assert.deepEqual(
      log.map((l) => [l.step, l.decision, l.applied_after_step]),
      [[1, 'revert', 1]],
    );
    const history = readJson<StepRecord[]>(dir.path, 'history.json');
    assert.ok(history[0]!.action.startsWith('accept'));
    const state = readJson<RuntimeState>(dir.path, 'runtime_state.json');
    assert.ok(state.last_completed_step >= 2);
  });

  it('auto with use_gate false: a person can revert a force-accepted step', async () => {
    const reviewer = new ScriptedReviewer(() => ({}), [[], [{ step: 1, decision: 'revert' }]]);
    await train(dir.path, 'auto', reviewer, ['train.num_epochs=1', 'evaluation.use_gate=false']);
    const history = readJson<StepRecord[]>(dir.path, 'history.json');
    assert.equal(history[0]!.action, 'force_accept');
    const log = readJson<Array<{ step: number; decision: string; current_score: number }>>(
      dir.path,
      'human_decisions.json',
    );
    assert.deepEqual(
      log.map((l) => [l.step, l.decision]),
      [[1, 'revert']],
      'the revert of a force-accepted step was dropped',
    );
    // The revert took effect before step 2: the current skill was the initial one, at its score.
    const summary = readJson<{ baseline_selection_hard: number }>(dir.path, 'summary.json');
    assert.equal(log[0]!.current_score, summary.baseline_selection_hard);
    const initial = read(dir.path, 'skills', 'skill_v0000.md');
    assert.notEqual(read(dir.path, 'steps', 'step_0001', 'candidate_skill.md'), initial);
    assert.equal(
      read(dir.path, 'skills', 'skill_v0001.md'),
      initial,
      'the skill after step 1 was not reverted',
    );
  });

  it('auto with the paired gate: a person can accept a step the gate found inconclusive', async () => {
    // Accept the first inconclusive step at the next step boundary after it.
    let sent: Overrule | undefined;
    const reviewer: Reviewer = {
      review: () => Promise.resolve({}),
      takeOverrules: () => {
        if (sent || !existsSync(join(dir.path, 'history.json'))) return [];
        const open = readJson<StepRecord[]>(dir.path, 'history.json').find(
          (r) => r.action === 'inconclusive',
        );
        if (!open) return [];
        sent = { step: open.step, decision: 'accept' };
        return [sent];
      },
    };
    await train(dir.path, 'auto', reviewer, ['evaluation.gate_test=paired']);
    const overrule = sent as Overrule | undefined;
    assert.ok(overrule, 'no step was inconclusive: the test shows nothing');
    // The summary's counts add up, inconclusive steps included.
    const sum = readJson<Record<string, number>>(dir.path, 'summary.json');
    assert.ok(sum.total_inconclusive! >= 1, JSON.stringify(sum));
    assert.equal(
      sum.total_accepts! + sum.total_rejects! + sum.total_inconclusive! + sum.total_skips!,
      sum.total_steps,
    );
    const log = existsSync(join(dir.path, 'human_decisions.json'))
      ? readJson<Array<{ step: number; decision: string; applied_after_step: number }>>(
          dir.path,
          'human_decisions.json',
        )
      : [];
    assert.deepEqual(
      log.map((l) => [l.step, l.decision]),
      [[overrule.step, 'accept']],
      'the accept of an inconclusive step was dropped',
    );
    // The skill after that boundary is the step's candidate.
    const pad = (n: number): string => String(n).padStart(4, '0');
    assert.equal(
      read(dir.path, 'skills', `skill_v${pad(log[0]!.applied_after_step)}.md`),
      read(dir.path, 'steps', `step_${pad(overrule.step)}`, 'candidate_skill.md'),
    );
  });

  it('auto: an overrule that changes nothing (accepting a kept step) is said, not dropped silently', async () => {
    const reviewer = new ScriptedReviewer(() => ({}), [[], [{ step: 1, decision: 'accept' }]]);
    const warnings: string[] = [];
    await trainPrepared(prepareSim(dir.path, ['review.mode=auto', 'train.num_epochs=1']), {
      emit: (e) => void (e.type === 'warning' && warnings.push(e.message)),
      signal: new AbortController().signal,
      resumeCommand: '',
      reviewer,
    });
    assert.ok(readJson<StepRecord[]>(dir.path, 'history.json')[0]!.action.startsWith('accept'));
    assert.deepEqual(
      warnings.filter((w) => w.includes('step 1')),
      [
        "your accept of step 1 changes nothing: the gate's verdict on it (accept_new_best) already kept its candidate",
      ],
    );
    assert.deepEqual(readJson<unknown[]>(dir.path, 'human_decisions.json'), [], 'recorded as if applied');
  });

  it('auto: an overrule of the last step, sent while the epoch end runs, still counts', async () => {
    // Answer nothing at step boundaries; overrule the last step only when the run is finishing.
    let calls = 0;
    let sent: Overrule | undefined;
    const reviewer: Reviewer = {
      review: () => Promise.resolve({}),
      takeOverrules: () => {
        calls++;
        const history = existsSync(join(dir.path, 'history.json'))
          ? readJson<StepRecord[]>(dir.path, 'history.json')
          : [];
        const last = history.filter((r) => r.candidate_hash).at(-1);
        const state = existsSync(join(dir.path, 'runtime_state.json'))
          ? readJson<RuntimeState>(dir.path, 'runtime_state.json')
          : undefined;
        const finishing = (state?.last_completed_epoch ?? 0) >= 1;
        if (!last || !finishing || sent) return [];
        sent = { step: last.step, decision: last.action.startsWith('accept') ? 'revert' : 'accept' };
        return [sent];
      },
    };
    await train(dir.path, 'auto', reviewer, ['train.num_epochs=1']);
    const overrule = sent as Overrule | undefined;
    assert.ok(overrule, `no overrule was sent (${calls} calls)`);
    const log = readJson<Array<{ step: number; decision: string }>>(dir.path, 'human_decisions.json');
    assert.deepEqual(
      log.map((l) => [l.step, l.decision]),
      [[overrule.step, overrule.decision]],
    );
    // The overruled skill keeps the protected block the epoch end has written since that step.
    assert.ok(read(dir.path, 'skills', 'skill_v0004.md').includes('<!-- SLOW_UPDATE_START -->'));
  });

  it('a review mode that needs a person, in a run with nobody to ask (the CLI), says it runs as auto', async () => {
    for (const [mode, warned] of [
      ['human-first', true],
      ['gate-then-human', true],
      ['auto', false],
    ] as const) {
      const out = join(dir.path, mode);
      const warnings: string[] = [];
      await trainPrepared(prepareSim(out, [`review.mode=${mode}`, 'train.num_epochs=1']), {
        emit: (e) => void (e.type === 'warning' && warnings.push(e.message)),
        signal: new AbortController().signal,
        resumeCommand: '',
      });
      const notice = warnings.find((w) => w.startsWith(`review.mode: ${mode}`));
      assert.equal(notice !== undefined, warned, `${mode}: ${warnings.join(' | ')}`);
      if (notice) assert.match(notice, /nobody to ask .* runs as auto/);
    }
  });
});
