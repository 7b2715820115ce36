import assert from 'node:assert/strict';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { comparableHistory, prepareSim, runSim, tempDir } from './helpers';

/** Temp files a killed process left in a run folder are removed when the run resumes. */
describe('stale temp files', function () {
  this.timeout(60_000);

  it('are removed on resume (only ours, never through a link), and the run ends as an uninterrupted one', async () => {
    const ref = tempDir('skillopt-temps-ref-');
    const dir = tempDir('skillopt-temps-');
    const outside = tempDir('skillopt-temps-outside-');
    try {
      await runSim(prepareSim(ref.path));
      const first = await runSim(
        prepareSim(dir.path),
        (e) => e.type === 'step/finished' && e.record.step === 2,
      );
      assert.equal(first.outcome.status, 'stopped');
      const planted = [
        join(dir.path, 'history.json.4242.0a1b2c3d.tmp'),
        join(dir.path, 'steps', 'step_0001', 'merged_patch.json.17.deadbeef.tmp'),
      ];
      for (const p of planted) writeFileSync(p, '{"torn":');
      const mine = join(dir.path, 'notes.tmp');
      writeFileSync(mine, 'not a SkillOpt temp file');
      const target = join(outside.path, 'precious.json.1.00000000.tmp');
      writeFileSync(target, 'outside the run folder');
      symlinkSync(target, join(dir.path, 'link.json.2.11111111.tmp'));

      const second = await runSim(prepareSim(dir.path));
      assert.equal(second.outcome.status, 'finished');
      for (const p of planted) assert.ok(!existsSync(p), `${p} was left`);
      assert.ok(existsSync(mine), 'a file that is not our temp file was removed');
      assert.equal(readFileSync(target, 'utf8'), 'outside the run folder');
      assert.deepEqual(comparableHistory(dir.path), comparableHistory(ref.path));
    } finally {
      for (const d of [ref, dir, outside]) d.cleanup();
    }
  });
});
