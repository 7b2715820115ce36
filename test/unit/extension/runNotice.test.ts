import assert from 'node:assert/strict';
import { runLogLine } from '../../../src/extension/runs/runLog';
import { actionLabel } from '../../../src/protocol/words';
import {
  asksStill,
  runNotice,
  staleReviewNotice,
  warningNotice,
} from '../../../src/extension/runs/runNotice';

describe('extension runs: the notification when a run ends', () => {
  it('offers the report and the best skill after a finished run, with the stop reason when early', () => {
    const done = runNotice('house-style_demo', {
      type: 'run/finished',
      outDir: '/runs/hs',
      bestStep: 3,
      bestScore: 0.947,
      baselineScore: 0.368,
      bestSkillPath: '/runs/hs/best_skill.md',
      reportPath: '/runs/hs/report.md',
      stoppedEarly: 'no improvement for patience 2 gated steps',
    });
    assert.deepEqual(done, {
      kind: 'info',
      text: 'SkillOpt: house-style_demo finished. Best selection score 0.947 (initial 0.368). Stopped early: no improvement for patience 2 gated steps.',
      actions: ['Open Report', 'Apply Best Skill'],
    });
    const python = runNotice('py', {
      type: 'run/finished',
      outDir: '/runs/py',
      bestStep: 1,
      bestScore: 0.5,
      baselineScore: 0.4,
      bestSkillPath: '/runs/py/best_skill.md',
    });
    assert.deepEqual(python.actions, ['Apply Best Skill'], 'no report to open');
  });

  it('offers nothing to apply when no candidate beat the initial skill', () => {
    const none = runNotice('hs', {
      type: 'run/finished',
      outDir: '/runs/hs',
      bestStep: 0,
      bestScore: 0.4,
      baselineScore: 0.4,
      bestSkillPath: '/runs/hs/best_skill.md',
      reportPath: '/runs/hs/report.md',
    });
    assert.deepEqual(none.actions, ['Open Report']);
    assert.match(none.text, /No candidate beat the initial skill \(0\.400\)/);
  });

  it('says a stop the person asked for plainly, without a warning', () => {
    const n = runNotice('hs', {
      type: 'run/stopped',
      outDir: '/r',
      reason: 'stopped by request',
      resumeCommand: '',
    });
    assert.deepEqual(n, {
      kind: 'info',
      text: 'SkillOpt: hs stopped as you asked. Nothing accepted is lost.',
      actions: ['Resume Run'],
    });
  });

  it('after a stop on a cap, says which cap to raise before resuming (caps count the whole run)', () => {
    const n = runNotice('hs', {
      type: 'run/stopped',
      outDir: '/r',
      reason: 'dollar budget of $5.00 reached ($5.13 spent)',
      resumeCommand: '',
      cap: { key: 'limits.max_dollars', limit: 5, used: 5.1289 },
    });
    assert.equal(
      n.text,
      'SkillOpt: hs stopped: dollar budget of $5.00 reached ($5.13 spent). Nothing accepted is lost. The cap counts the whole run: raise limits.max_dollars above 5.13 in the config before resuming.',
    );
  });

  it('offers Resume after a stop and the log after a failure', () => {
    assert.deepEqual(
      runNotice('hs', {
        type: 'run/stopped',
        outDir: '/r',
        reason: 'token budget reached',
        resumeCommand: '',
      }),
      {
        kind: 'warning',
        text: 'SkillOpt: hs stopped: token budget reached. Nothing accepted is lost.',
        actions: ['Resume Run'],
      },
    );
    const failed = runNotice('hs', {
      type: 'run/failed',
      message: 'OPENAI_API_KEY is not set',
      reason: 'config',
    });
    assert.equal(failed.kind, 'error');
    assert.equal(failed.text, 'SkillOpt: hs failed: OPENAI_API_KEY is not set');
    assert.deepEqual(failed.actions, ['Show Log', 'Resume Run']);
  });

  it('never lets a provider message or folder name become a link', () => {
    const n = runNotice('run](command:workbench.action.quit)', {
      type: 'run/failed',
      message: 'see [docs](https://evil.example)',
      reason: 'llm',
    });
    assert.ok(!/\]\(/.test(n.text), n.text);
  });
});

describe('extension runs: the Output channel follows a run', () => {
  it('logs each verdict in plain words, a pause for review and how the run ended', () => {
    assert.equal(
      runLogLine('hs', {
        type: 'gate/verdict',
        step: 3,
        epoch: 1,
        origin: 'step',
        action: 'reject',
        candidateScore: 0.5,
        currentScore: 0.55,
        bestScore: 0.55,
        cacheHit: false,
      }),
      'hs: step 3 rejected by the gate (0.500 against 0.550; best 0.550)',
    );
    // An accepted candidate is the run's current skill after the verdict: no "0.737 against 0.737".
    assert.equal(
      runLogLine('hs', {
        type: 'gate/verdict',
        step: 1,
        epoch: 1,
        origin: 'step',
        action: 'accept_new_best',
        candidateScore: 0.737,
        currentScore: 0.737,
        bestScore: 0.737,
        cacheHit: false,
      }),
      `hs: step 1 ${actionLabel('accept_new_best')} (scored 0.737; best 0.737)`,
    );
    // The person's own Stop in plain words; another reason as the engine gives it.
    for (const [reason, said] of [
      ['stopped by request', 'stopped as you asked'],
      ['token budget reached', 'stopped (token budget reached)'],
    ])
      assert.equal(
        runLogLine('hs', { type: 'run/stopped', outDir: '/r', reason, resumeCommand: 'skillopt resume /r' }),
        `hs: ${said}; resume with Resume Run or skillopt resume /r`,
      );
    assert.equal(
      runLogLine('hs', {
        type: 'run/finished',
        outDir: '/r',
        bestStep: 2,
        bestScore: 0.9,
        baselineScore: 0.4,
        bestSkillPath: '/r/best_skill.md',
        reportPath: '/r/report.md',
      }),
      'hs: finished; best selection score 0.900 at step 2 (initial 0.400); report /r/report.md',
    );
    assert.equal(runLogLine('hs', { type: 'stage/started', step: 1, epoch: 1, stage: 'rollout' }), undefined);
  });

  it('logs warnings and fallbacks, and notifies a warning without letting its text make links', () => {
    assert.equal(
      runLogLine('hs', { type: 'warning', message: 'resuming under a changed config' }),
      'hs: warning: resuming under a changed config',
    );
    assert.equal(
      runLogLine('hs', { type: 'fallback', stage: 'aggregate', reason: 'merge reply unparsable' }),
      'hs: fallback in aggregate: merge reply unparsable',
    );
    const n = warningNotice('hs', 'no price for [m](command:workbench.action.quit)');
    assert.deepEqual(n.actions, ['Show Log']);
    assert.match(n.text, /^SkillOpt: hs: no price for /);
    assert.ok(!/\]\(/.test(n.text), n.text);
  });
});

describe('extension runs: a waiting notice clicked too late', () => {
  const asked = {
    type: 'review/requested' as const,
    questionId: 'q-2',
    step: 2,
    epoch: 1,
    phase: 'before_gate' as const,
    candidatePath: '/runs/hs/steps/step_0002/candidate_skill.md',
    candidateHash: 'abc',
    edits: [],
  };

  it('acts only on the question it was drawn for: the same step asked again after a resume is another question', () => {
    assert.equal(asksStill(asked, asked), true);
    assert.equal(asksStill(asked, { ...asked, questionId: 'q-2-again' }), false, 'the step re-asked');
    assert.equal(asksStill(asked, undefined), false);
    assert.deepEqual(staleReviewNotice('hs', asked, 'Accept', 2), {
      text: 'SkillOpt: hs asked about step 2 again since this notification (the run was stopped and resumed); nothing was accepted. Review step 2 as the run asks it now.',
      actions: ['Review Step 2'],
    });
  });

  it('says nothing was done and offers the step the run waits on now, or nothing when it waits on none', () => {
    assert.deepEqual(staleReviewNotice('hs', asked, 'Accept', 3), {
      text: 'SkillOpt: hs no longer waits on step 2 (it was decided, or the run moved on); nothing was accepted. It is waiting for your review of step 3 now.',
      actions: ['Review Step 3'],
    });
    assert.deepEqual(staleReviewNotice('hs', asked, 'Reject'), {
      text: 'SkillOpt: hs no longer waits on step 2 (it was decided, or the run moved on); nothing was rejected. It is not waiting for you now.',
      actions: [],
    });
  });
});
