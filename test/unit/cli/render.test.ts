import assert from 'node:assert/strict';
import { PrettyPrinter } from '../../../src/cli/render';
import type { EngineEvent } from '../../../src/protocol/events';

/** What the CLI prints for one event (plain text, as to a pipe). */
function printed(event: EngineEvent): string {
  let out = '';
  const stream = {
    isTTY: false,
    write: (s: string) => ((out += s), true),
  } as unknown as NodeJS.WriteStream;
  new PrettyPrinter(stream).handle(event);
  return out;
}

const finished = {
  type: 'run/finished',
  outDir: '/r',
  bestStep: 3,
  bestScore: 0.7,
  baselineScore: 0.5,
  bestSkillPath: '/r/best_skill.md',
} as const;

/** What the CLI prints when a run finishes: the test split with its intervals and the overfitting flag. */
describe('CLI: the finished run', () => {
  it('prints the test scores with their intervals, and flags a selection gain that test does not confirm', () => {
    const out = printed({
      ...finished,
      test: { baseline: 0.5, best: 0.52, final: 0.52 },
      testCheck: {
        level: 0.95,
        intervals: { initial: [0.3, 0.7], best: [0.32, 0.71] },
        best_vs_initial: { n: 20, mean_delta: 0.02, interval: [-0.1, 0.15] },
        selection_gain: 0.2,
        verdict: 'not_confirmed',
      },
    });
    assert.match(
      out,
      /Test scores, 95% intervals \(Wilson\): initial \[0\.300, 0\.700\], best \[0\.320, 0\.710\]\./,
    );
    assert.match(
      out,
      /The best skill's selection gain \(\+0\.200\) does not show on test \(best − initial on the same 20 test items: \+0\.020, 95% interval \[-0\.100, 0\.150\]\): the selection split may be overfitted\. Enlarge it, use evaluation\.gate_test: paired/,
    );
    assert.doesNotMatch(out, /\*\*|`/, 'plain text, no Markdown');
  });

  it('prints the target alone beside the skills, or that it was not scored with the key that turns it on', () => {
    const end = (extra: object): string =>
      printed({ ...finished, test: { baseline: 0.5, best: 0.6, final: 0.6 }, ...extra });
    assert.match(
      end({ noSkill: { selection: 0.4, test: 0.45 } }),
      /No skill \(the target alone\): selection 0\.400, test 0\.450\. The best skill beats no skill at all by \+0\.150 on test\./,
    );
    assert.match(
      end({ noSkill: { selection: 0.8, test: 0.7 } }),
      /The best skill scores below no skill at all \(−0\.100 on test\): the skill may hurt/,
    );
    assert.match(
      end({ noSkillOff: true }),
      /The target with no skill at all was not scored \(evaluation\.no_skill_baseline: false\)/,
    );
  });

  const started = {
    type: 'run/started',
    runId: '/r',
    outDir: '/r',
    totalSteps: 4,
    epochs: 1,
    stepsPerEpoch: 4,
    splitSizes: { train: 25, val: 20, test: 18 },
    optimizer: 'sim/o',
    target: 'sim/t',
    simulated: true,
  } as const;

  it('says at the start what the gate can tell from noise (the power check)', () => {
    const out = printed({ ...started, gatePower: { test: 'paired', items: 20, repeats: 1, alpha: 0.05 } });
    assert.match(
      out,
      /gate paired; 20 items × 1 repeat: only Δ ≥ 0\.250 can be told from noise at alpha 0\.05; for Δ 0\.10, 3 repeats or 50 selection items/,
    );
  });

  it('resumes "at step N" inside the run and "after the last step" past it, never "at step 5" of 4', () => {
    assert.match(
      printed({ ...started, resumedFromStep: 3 }),
      /^Resuming at step 3: 1 epoch\(s\) × 4 step\(s\)/m,
    );
    const past = printed({ ...started, resumedFromStep: 5 });
    assert.match(past, /^Resuming after the last step \(4\), at the end-of-run stages: 1 epoch/m);
    assert.doesNotMatch(past, /step 5/);
    assert.match(printed(started), /^Training: 1 epoch/m);
  });

  it('says at the start that the gate is off under use_gate: false, not a strict gate', () => {
    const out = printed({ ...started, gateOff: true });
    assert.match(out, /gate off \(evaluation\.use_gate: false\): every candidate is accepted/);
    assert.doesNotMatch(out, /strict/);
  });
});
