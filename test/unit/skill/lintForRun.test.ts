import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkSkillForRun, skillHost } from '../../../src/engine/skill/lintForRun';
import { tempDir } from '../train/helpers';

describe('SKILL.md lint for a run', () => {
  const d = tempDir('skillopt-lint-run-');
  const path = join(d.path, 'pdf-forms', 'SKILL.md');
  after(() => d.cleanup());
  mkdirSync(join(d.path, 'pdf-forms'), { recursive: true });
  const check = (text: string, backend: string, runsCommand = true, skillName = 'skill'): string[] => {
    writeFileSync(path, text);
    return checkSkillForRun(
      { path, text },
      { target_backend: backend, target_skill_name: skillName },
      runsCommand,
    );
  };
  const noDescription = '---\nname: pdf-forms\n---\nbody\n';
  const brokenYaml = '---\nname: [pdf\ndescription: d\n---\nbody\n';

  it('knows the host from the target backend', () => {
    assert.equal(skillHost('claude_code_exec', true), 'claude');
    assert.equal(skillHost('codex', true), 'codex');
    assert.equal(skillHost('copilot_exec', true), 'copilot');
    assert.equal(skillHost('command', true), 'command');
    assert.equal(skillHost('openai', false), 'chat');
  });

  it('refuses, per host, only what keeps that host from loading the skill', () => {
    for (const backend of ['codex_exec', 'copilot_exec'])
      assert.throws(() => check(noDescription, backend), /would not load this skill.*no `description`/);
    // Claude Code and a custom command load a skill without a description; a chat target reads it as text.
    assert.match(
      check(noDescription, 'claude_code_exec')[0] ?? '',
      /SKILL\.md:1:1: front matter has no `description`/,
    );
    assert.equal(check(noDescription, 'command').length, 1);
    assert.equal(check(noDescription, 'openai', false).length, 1);
    for (const backend of ['claude_code_exec', 'codex_exec', 'copilot_exec', 'command'])
      assert.throws(() => check(brokenYaml, backend), /not valid YAML/, backend);
    assert.match(check(brokenYaml, 'openai', false)[0] ?? '', /not valid YAML/);
  });

  it('refuses an over-long description for Codex only', () => {
    const long = `---\nname: pdf-forms\ndescription: ${'word '.repeat(300)}\n---\n`;
    assert.throws(
      () => check(long, 'codex_exec'),
      /Codex, the run's target, would not load.*1,499 characters/,
    );
    assert.match(check(long, 'claude_code_exec').join('\n'), /over the limit of 1,024/);
  });

  it('names the run folder an agent gets for a skill without front matter, and says nothing to a chat target', () => {
    assert.match(check('# body\n', 'claude_code_exec')[0] ?? '', /gives Claude Code `name: skill`/);
    assert.match(check('# body\n', 'codex_exec', true, 'forms')[0] ?? '', /gives Codex `name: forms`/);
    assert.deepEqual(check('# body\n', 'openai', false), []);
  });
});
