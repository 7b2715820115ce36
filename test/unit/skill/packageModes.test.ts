import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installSkill } from '../../../src/engine/llm/agents/delivery';
import { applyEdits, summarizeReport } from '../../../src/engine/skill/applyEdits';
import { readSkillArtifact, writeSkillArtifact } from '../../../src/engine/skill/package/artifacts';
import { readEditTarget, replayEdits, writeChanges } from '../../../src/engine/skill/package/replay';
import { DEFAULT_PACKAGE_POLICY } from '../../../src/engine/skill/package/policy';
import { splitPackage } from '../../../src/engine/skill/package/text';
import { readSkillInit } from '../../../src/engine/skill/skillFile';

const tempDir = (): string => mkdtempSync(join(tmpdir(), 'skillopt-modes-'));
const mode = (path: string): number => statSync(path).mode & 0o777;

/** A skill folder with an executable script, a plain one, and an executable binary. */
function folderWithScripts(): string {
  const d = tempDir();
  mkdirSync(join(d, 'scripts'));
  mkdirSync(join(d, 'assets'));
  writeFileSync(
    join(d, 'SKILL.md'),
    '---\nname: x\ndescription: Checks.\n---\n# X\n\nRun scripts/check.sh.\n',
  );
  writeFileSync(join(d, 'scripts', 'check.sh'), '#!/bin/sh\necho ok\n');
  chmodSync(join(d, 'scripts', 'check.sh'), 0o755);
  writeFileSync(join(d, 'scripts', 'lib.sh'), 'ok() { echo ok; }\n');
  chmodSync(join(d, 'scripts', 'lib.sh'), 0o644);
  writeFileSync(join(d, 'assets', 'tool'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1]));
  chmodSync(join(d, 'assets', 'tool'), 0o755);
  return d;
}

describe('executable files of a skill folder', function () {
  // POSIX modes: Windows has no executable bit to keep.
  if (process.platform === 'win32') return;

  it('stay executable in snapshots and best_skill/, edited or not, and read back the same', () => {
    const text = readSkillInit(folderWithScripts(), 200_000).text;
    const files = splitPackage(text).files;
    assert.deepEqual(
      files.map((f) => [f.path, f.executable === true]),
      [
        ['scripts/check.sh', true],
        ['scripts/lib.sh', false],
      ],
    );
    const policy = { ...DEFAULT_PACKAGE_POLICY, editable: ['SKILL.md', 'scripts/**'] };
    const edited = applyEdits(
      text,
      [{ op: 'replace', file: 'scripts/check.sh', target: 'echo ok', content: 'echo checked' }],
      { packagePolicy: policy },
    );
    assert.equal(summarizeReport(edited.report).applied, 1);
    const run = tempDir();
    for (const [name, version] of [
      ['skill_v0000', text],
      ['best_skill', edited.text],
    ] as const) {
      writeSkillArtifact(join(run, `${name}.md`), version);
      assert.equal(mode(join(run, name, 'scripts', 'check.sh')), 0o755, name);
      assert.equal(mode(join(run, name, 'scripts', 'lib.sh')) & 0o111, 0, name);
      assert.equal(mode(join(run, name, 'assets', 'tool')), 0o755, name);
      assert.equal(readSkillArtifact(join(run, `${name}.md`)), version);
    }
    assert.equal(
      readFileSync(join(run, 'best_skill', 'scripts', 'check.sh'), 'utf8'),
      '#!/bin/sh\necho checked\n',
    );
  });

  it('are made of the scripts an edit adds with a #! line', () => {
    const text = readSkillInit(folderWithScripts(), 200_000).text;
    const policy = { ...DEFAULT_PACKAGE_POLICY, editable: ['SKILL.md', 'scripts/**', 'references/**'] };
    const out = applyEdits(
      text,
      [
        { op: 'append', file: 'scripts/dates.py', content: '#!/usr/bin/env python3\nprint("ok")' },
        { op: 'append', file: 'scripts/notes.txt', content: 'plain notes' },
        { op: 'append', file: 'references/run.md', content: '#!not a script' },
      ],
      { packagePolicy: policy },
    ).text;
    const run = tempDir();
    writeSkillArtifact(join(run, 'candidate_skill.md'), out);
    assert.equal(mode(join(run, 'candidate_skill', 'scripts', 'dates.py')), 0o755);
    assert.equal(mode(join(run, 'candidate_skill', 'scripts', 'notes.txt')) & 0o111, 0);
    assert.equal(mode(join(run, 'candidate_skill', 'references', 'run.md')) & 0o111, 0);
    assert.equal(readSkillArtifact(join(run, 'candidate_skill.md')), out);
  });

  it('stay executable in the folder installed into an agent workspace', () => {
    const text = readSkillInit(folderWithScripts(), 200_000).text;
    const skillDir = join(tempDir(), '.claude', 'skills', 'x');
    installSkill(skillDir, { taskId: 't', skill: text, skillName: 'x', prompt: 'p' }, 'Checks.');
    assert.equal(mode(join(skillDir, 'scripts', 'check.sh')), 0o755);
    assert.equal(mode(join(skillDir, 'scripts', 'lib.sh')) & 0o111, 0);
    assert.equal(mode(join(skillDir, 'assets', 'tool')), 0o755);
  });
});

describe('skillopt apply-edits --write on a skill folder', () => {
  if (process.platform === 'win32') return;

  it('keeps an edited script executable and makes a #! script it adds executable', () => {
    const d = folderWithScripts();
    const target = readEditTarget(d, 200_000);
    const policy = { ...DEFAULT_PACKAGE_POLICY, editable: ['SKILL.md', 'scripts/**'], folder: true };
    const result = replayEdits(
      target,
      [
        { op: 'replace', file: 'scripts/check.sh', target: 'echo ok', content: 'echo checked' },
        { op: 'append', file: 'scripts/lib.sh', content: 'two() { echo 2; }' },
        { op: 'append', file: 'scripts/new.sh', content: '#!/bin/sh\necho new' },
      ],
      { anchorMode: 'strict', policy, keepDescription: false },
    );
    writeChanges(target, result.changes);
    assert.equal(readFileSync(join(d, 'scripts', 'check.sh'), 'utf8'), '#!/bin/sh\necho checked\n');
    assert.equal(mode(join(d, 'scripts', 'check.sh')), 0o755);
    assert.equal(mode(join(d, 'scripts', 'lib.sh')), 0o644);
    assert.equal(mode(join(d, 'scripts', 'new.sh')), 0o755);
  });
});

describe('binary files of a skill folder', () => {
  it('are copied byte for byte as the run read them, even after the skill folder changed one', () => {
    const d = folderWithScripts();
    const logo = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0xff, 0xfe, 7]);
    writeFileSync(join(d, 'assets', 'logo.png'), logo);
    const text = readSkillInit(d, 200_000).text;
    const run = tempDir();
    writeSkillArtifact(join(run, 'skill_v0000.md'), text);
    // The author edits the asset while the run goes on.
    writeFileSync(join(d, 'assets', 'logo.png'), Buffer.from([1, 2, 3]));
    writeSkillArtifact(join(run, 'best_skill.md'), text);
    assert.deepEqual(readFileSync(join(run, 'best_skill', 'assets', 'logo.png')), logo);
    const skillDir = join(tempDir(), 'x');
    installSkill(skillDir, { taskId: 't', skill: text, skillName: 'x', prompt: 'p' }, 'Checks.');
    assert.deepEqual(readFileSync(join(skillDir, 'assets', 'logo.png')), logo);
    assert.equal(readSkillArtifact(join(run, 'best_skill.md')), text);
  });
});
