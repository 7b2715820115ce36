import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTaskRecords } from '../../../src/engine/data/taskFiles';
import { SkillOptError } from '../../../src/engine/errors';
import { prepareRun } from '../../../src/engine/run';
import { exampleConfig, tempDir } from '../train/helpers';

describe('inputs that must be text', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir('skillopt-text-');
  });
  afterEach(() => dir.cleanup());

  function refusal(skillPath: string, extra: string[] = []): SkillOptError {
    try {
      prepareRun({
        configPath: exampleConfig,
        outDir: join(dir.path, 'run'),
        dryRun: true,
        overrides: ['cache.enabled=false', `env.skill_init=${skillPath}`, ...extra],
      });
    } catch (err) {
      assert.ok(SkillOptError.is(err, 'skill'), String(err));
      return err;
    }
    assert.fail('the skill was accepted');
  }

  it('refuses a folder as the skill', () => {
    const folder = join(dir.path, 'SKILL.md');
    mkdirSync(folder);
    const err = refusal(folder);
    assert.match(err.message, /is a folder/);
    assert.ok(err.message.includes(folder));
    assert.match(err.message, /Fix: /);
  });

  it('refuses a skill with NUL bytes or invalid UTF-8, naming the file', () => {
    const nul = join(dir.path, 'nul.md');
    writeFileSync(nul, Buffer.from('# Skill\n\0\0binary'));
    assert.match(refusal(nul).message, /nul\.md.*not a text file.*Fix: /);
    const latin1 = join(dir.path, 'latin1.md');
    writeFileSync(latin1, Buffer.from([0x23, 0x20, 0x53, 0x0a, 0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const err = refusal(latin1);
    assert.match(err.message, /latin1\.md:2.*not UTF-8.*Fix: .*UTF-8/);
  });

  it('refuses a skill larger than env.max_skill_bytes, and accepts it when raised', () => {
    const big = join(dir.path, 'big.md');
    writeFileSync(big, '# Skill\n' + 'x'.repeat(300));
    const err = refusal(big, ['env.max_skill_bytes=100']);
    assert.match(err.message, /big\.md.*308 bytes.*env\.max_skill_bytes.*100/);
    const ok = prepareRun({
      configPath: exampleConfig,
      outDir: join(dir.path, 'run2'),
      dryRun: true,
      overrides: ['cache.enabled=false', `env.skill_init=${big}`, 'env.max_skill_bytes=1000'],
    });
    assert.ok(ok.initialSkill.startsWith('# Skill'));
  });

  it('refuses a task file with an invalid UTF-8 sequence, naming the file and the line', () => {
    const file = join(dir.path, 'tasks.jsonl');
    const lines = ['{"id":"a","question":"q1","answer":"x"}', '{"id":"b","question":"q2","answer":"y"}'];
    writeFileSync(
      file,
      Buffer.concat([
        Buffer.from(lines.join('\n') + '\n{"id":"c","question":"caf'),
        Buffer.from([0xe9]),
        Buffer.from('","answer":"z"}\n'),
      ]),
    );
    assert.throws(
      () => readTaskRecords(file),
      (err: unknown) =>
        SkillOptError.is(err, 'tasks') && /tasks\.jsonl:3: .*not valid UTF-8.*Fix: .*UTF-8/.test(err.message),
    );
  });
});
