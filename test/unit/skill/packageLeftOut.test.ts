import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copySkillFolder, skillResourcesDigest } from '../../../src/engine/llm/agents/isolation';
import { filesOnlyInSkill } from '../../../src/engine/skill/package/apply';
import { optimizerSkillView } from '../../../src/engine/skill/package/views';
import { DEFAULT_PACKAGE_POLICY } from '../../../src/engine/skill/package/policy';
import { splitPackage } from '../../../src/engine/skill/package/text';
import { readSkillInit } from '../../../src/engine/skill/skillFile';

const tempDir = (): string => mkdtempSync(join(tmpdir(), 'skillopt-leftout-'));

/**
 * A skill whose scripts were run on the author's machine: `npm install` left node_modules/ (with
 * its .bin links), Python left __pycache__/, and a virtual environment links to the interpreter.
 */
function usedSkillFolder(): string {
  const d = tempDir();
  mkdirSync(join(d, 'references'));
  mkdirSync(join(d, 'scripts', 'node_modules', 'left-pad', 'lib'), { recursive: true });
  mkdirSync(join(d, 'scripts', 'node_modules', '.bin'));
  mkdirSync(join(d, 'scripts', '__pycache__'));
  mkdirSync(join(d, 'scripts', '.venv', 'bin'), { recursive: true });
  writeFileSync(join(d, 'SKILL.md'), '---\nname: s\ndescription: D.\n---\n# S\n\nRun scripts/fill.js.\n');
  writeFileSync(join(d, 'references', 'guide.md'), '# Guide\n');
  writeFileSync(join(d, 'scripts', 'fill.js'), "require('left-pad');\n");
  writeFileSync(join(d, 'scripts', 'node_modules', 'left-pad', 'lib', 'index.js'), 'module.exports = 1;\n');
  symlinkSync('../left-pad/lib/index.js', join(d, 'scripts', 'node_modules', '.bin', 'left-pad'));
  writeFileSync(join(d, 'scripts', '__pycache__', 'fill.cpython-312.pyc'), Buffer.from([0, 1, 2]));
  symlinkSync(process.execPath, join(d, 'scripts', '.venv', 'bin', 'python'));
  return d;
}

describe("tools' folders inside a skill folder (node_modules/, __pycache__/, hidden ones)", () => {
  it('are left out of the trained skill, named once each, and their links are not refused', () => {
    const { text, notices } = readSkillInit(usedSkillFolder(), 200_000);
    const pkg = splitPackage(text);
    assert.deepEqual(
      pkg.files.map((f) => f.path),
      ['references/guide.md', 'scripts/fill.js'],
    );
    assert.deepEqual(pkg.readOnly, []);
    assert.equal(notices.length, 1);
    assert.match(notices[0]!, /left out: scripts\/\.venv, scripts\/__pycache__, scripts\/node_modules$/);
    const view = optimizerSkillView(text, { ...DEFAULT_PACKAGE_POLICY, folder: true });
    assert.doesNotMatch(view, /node_modules|__pycache__|\.venv/);
  });

  it('stay behind when an agent target gets the folder beside a single SKILL.md, and in Apply Best', () => {
    const skill = usedSkillFolder();
    assert.ok(skillResourcesDigest(skill));
    const work = tempDir();
    copySkillFolder(skill, work);
    assert.deepEqual(readdirSync(join(work, 'scripts')), ['fill.js']);
    assert.ok(existsSync(join(work, 'references', 'guide.md')));
    const best = tempDir();
    mkdirSync(join(best, 'references'));
    writeFileSync(join(best, 'SKILL.md'), 'x');
    writeFileSync(join(best, 'references', 'guide.md'), '# Guide\n');
    assert.deepEqual(filesOnlyInSkill(best, skill), ['scripts/fill.js']);
  });

  it('says which files the skill names cannot be shown to a model (binary, or text over 128 KiB)', () => {
    const d = usedSkillFolder();
    mkdirSync(join(d, 'assets'));
    writeFileSync(join(d, 'references', 'api.md'), `# API\n${'x'.repeat(140 * 1024)}\n`);
    writeFileSync(join(d, 'assets', 'form.pdf'), Buffer.from([0x25, 0x50, 0x44, 0x46, 0]));
    writeFileSync(join(d, 'assets', 'unused.bin'), Buffer.from([0]));
    writeFileSync(join(d, 'references', 'guide.md'), '# Guide\n\nFill assets/form.pdf.\n');
    writeFileSync(
      join(d, 'SKILL.md'),
      '---\nname: s\ndescription: D.\n---\n# S\n\nSee references/api.md and references/guide.md.\n',
    );
    const { notices } = readSkillInit(d, 200_000);
    const said = notices.filter((n) => n.includes('never shown to a model'));
    assert.equal(said.length, 1, notices.join('\n'));
    assert.match(
      said[0]!,
      /: references\/api\.md \(\d+ bytes\), assets\/form\.pdf \(5 bytes\) are named by the skill/,
    );
    assert.doesNotMatch(said[0]!, /unused/);
  });
});
