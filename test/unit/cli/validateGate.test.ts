import assert from 'node:assert/strict';
import { join } from 'node:path';
import { cliInProcess } from '../../support/cliInProcess';

const config = join(__dirname, '..', '..', '..', 'examples', 'house-style', 'skillopt.yaml');

/** validate shows the gate the run will use: off with use_gate false, and the score it compares. */
describe('skillopt validate: the gate line', function () {
  this.timeout(60_000);
  const gate = async (more: string[]): Promise<string> => {
    const r = await cliInProcess(['validate', config, ...more]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    return /^ {2}gate {6}(.*)$/m.exec(r.stdout)?.[1] ?? r.stdout;
  };

  it('is strict on the hard score by default, with its power', async () => {
    assert.match(
      await gate([]),
      /^strict; \d+ items × 1 repeat: only Δ ≥ [\d.]+ can be told from noise[^(]*$/,
    );
  });

  it("says it is off with the reference's --use_gate False", async () => {
    assert.match(
      await gate(['--use_gate', 'False']),
      /^off \(evaluation\.use_gate: false\): every candidate is accepted/,
    );
  });

  it('names a soft or mixed score (features/soft_gate.yaml)', async () => {
    assert.match(
      await gate(['--cfg-options', 'evaluation.gate_metric=soft']),
      /noise.* \(on the soft score\)$/,
    );
    assert.match(
      await gate(['--cfg-options', 'evaluation.gate_metric=mixed', 'evaluation.gate_mixed_weight=0.3']),
      /\(on the mixed score, soft weight 0\.3\)$/,
    );
  });
});
