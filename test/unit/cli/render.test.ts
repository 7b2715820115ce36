import assert from 'node:assert/strict';
import { PrettyPrinter } from '../../../src/cli/render';

/** What the CLI prints when a run finishes: the test split with its intervals and the overfitting flag. */
describe('CLI: the finished run', () => {
  it('prints the test scores with their intervals, and flags a selection gain that test does not confirm', () => {
    let out = '';
    const stream = {
      isTTY: false,
      write: (s: string) => ((out += s), true),
    } as unknown as NodeJS.WriteStream;
    new PrettyPrinter(stream).handle({
      type: 'run/finished',
      outDir: '/r',
      bestStep: 3,
      bestScore: 0.7,
      baselineScore: 0.5,
      bestSkillPath: '/r/best_skill.md',
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
});
