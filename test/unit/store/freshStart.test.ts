import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clearRunFolder } from '../../../src/engine/store/freshStart';
import { packageDirOf, RUN_FILE } from '../../../src/engine/store/layout';

describe('store/freshStart: --fresh clears what a run wrote', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'skillopt-fresh-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // A skill-folder run keeps its best skill whole in best_skill/ (packageDirOf) beside best_skill.md;
  // left behind, the new run's folder would show the old run's best skill as its own.
  it("deletes a skill-folder run's best_skill/ and its leftovers, and keeps the person's files", () => {
    const bestDir = packageDirOf(RUN_FILE.bestSkill);
    writeFileSync(join(dir, RUN_FILE.config), '{}');
    writeFileSync(join(dir, RUN_FILE.bestSkill), 'old best');
    for (const d of [bestDir, `${bestDir}.old-123`, `${bestDir}.tmp-123`]) {
      mkdirSync(join(dir, d));
      writeFileSync(join(dir, d, 'SKILL.md'), 'old best');
    }
    writeFileSync(join(dir, 'notes.md'), 'mine');
    assert.deepEqual(clearRunFolder(dir), ['notes.md']);
    assert.deepEqual(readdirSync(dir), ['notes.md']);
  });
});
