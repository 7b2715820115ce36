import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SkillOptError } from '../../../src/engine/errors';
import { readHistory, readRuntimeState, RUNTIME_STATE_VERSION } from '../../../src/engine/store/runSchemas';

const pythonRun = join(__dirname, '..', '..', 'fixtures', 'skillopt-python-run');

describe('versioned run files', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-schemas-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const state = (extra: Record<string, unknown>): string => {
    const file = join(dir, 'runtime_state.json');
    writeFileSync(
      file,
      JSON.stringify({
        last_completed_step: 3,
        current_skill_path: '/x/skills/skill_v0003.md',
        current_score: 0.5,
        current_origin: 'step_0003',
        best_skill_path: '/x/best_skill.md',
        best_score: 0.5,
        best_step: 3,
        best_origin: 'step_0003',
        ...extra,
      }),
    );
    return file;
  };

  it('reads the Python reference’s runtime_state.json and history.json unchanged', () => {
    const s = readRuntimeState(join(pythonRun, 'runtime_state.json'));
    assert.equal(s?.last_completed_step, 2);
    assert.equal(s?.schema_version, undefined);
    const h = readHistory(join(pythonRun, 'history.json'));
    assert.ok(h.length > 0);
    assert.equal(h[0]!.step, 1);
  });

  it('reads our files from before versioning and of the current version', () => {
    assert.equal(readRuntimeState(state({ engine: 'skillopt-vscode' }))?.current_score, 0.5);
    assert.equal(readRuntimeState(state({ schema_version: RUNTIME_STATE_VERSION }))?.best_step, 3);
  });

  it('refuses a state written by a newer version, naming the file and both versions', () => {
    const file = state({ schema_version: RUNTIME_STATE_VERSION + 1 });
    assert.throws(
      () => readRuntimeState(file),
      (err: unknown) =>
        SkillOptError.is(err, 'io') &&
        err.message.includes(file) &&
        err.message.includes(`schema ${RUNTIME_STATE_VERSION + 1}`) &&
        err.message.includes('update SkillOpt'),
    );
  });

  it('names the file and the field of a damaged state instead of trusting it', () => {
    const file = state({ current_score: 'high' });
    assert.throws(
      () => readRuntimeState(file),
      (err: unknown) => SkillOptError.is(err, 'io') && err.message.includes('current_score'),
    );
    writeFileSync(file, '{"last_completed_step": 3,');
    assert.throws(
      () => readRuntimeState(file),
      (err: unknown) => SkillOptError.is(err, 'io') && err.message.includes('not valid JSON'),
    );
  });

  it('refuses a history record with an action no version of SkillOpt writes', () => {
    const file = join(dir, 'history.json');
    writeFileSync(
      file,
      JSON.stringify([{ step: 1, epoch: 1, action: 'acept', current_score: 0, best_score: 0, best_step: 0 }]),
    );
    assert.throws(() => readHistory(file), /0\.action/);
  });
});
