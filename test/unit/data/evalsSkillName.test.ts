import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepareRun } from '../../../src/engine/run';
import { tempDir } from '../train/helpers';

const fixture = join(__dirname, '..', '..', 'fixtures', 'evals', 'invoice-totals');

/** Issue 17: a skill-creator folder's evals.json names its skill; evals of another skill are said before any spend. */
describe("skill-creator evals.json: its skill_name against the trained skill's name", () => {
  function validate(skillName: string | undefined): string[] {
    const dir = tempDir('skillopt-evals-name-');
    try {
      const folder = join(dir.path, 'invoice-totals');
      cpSync(fixture, folder, { recursive: true });
      const evalsPath = join(folder, 'evals', 'evals.json');
      const evals = JSON.parse(readFileSync(evalsPath, 'utf8')) as Record<string, unknown>;
      if (skillName === undefined) delete evals.skill_name;
      else evals.skill_name = skillName;
      writeFileSync(evalsPath, JSON.stringify(evals));
      const prepared = prepareRun({ configPath: join(folder, 'skillopt.yaml'), dryRun: true });
      return prepared.warnings.filter((w) => /\(skill_name\)/.test(w));
    } finally {
      dir.cleanup();
    }
  }

  it('says nothing when they match, or when the file names no skill', () => {
    assert.deepEqual(validate('invoice-totals'), []);
    assert.deepEqual(validate(undefined), []);
  });

  it('warns, naming both skills and the fix, when the evals are for another skill', () => {
    const [notice, ...rest] = validate('pdf-forms');
    assert.equal(rest.length, 0);
    assert.match(
      notice ?? '',
      /evals\.json: these skill-creator evals are for skill "pdf-forms" \(skill_name\), but the skill trained is "invoice-totals" .*Fix: point env\.data_path at this skill's evals\/evals\.json/,
    );
  });
});
