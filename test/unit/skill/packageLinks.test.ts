import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SkillOptError } from '../../../src/engine/errors';
import { skillResourcesDigest } from '../../../src/engine/llm/agents/isolation';
import { readSkillInit } from '../../../src/engine/skill/skillFile';

const tempDir = (): string => mkdtempSync(join(tmpdir(), 'skillopt-pkglink-'));
const SECRET = 'root:x:0:0:a secret outside the skill';

/** A skill folder with one reference, and a file outside it that a link may lead to. */
function skillFolder(): { skill: string; outside: string } {
  const skill = tempDir();
  mkdirSync(join(skill, 'references'));
  writeFileSync(
    join(skill, 'SKILL.md'),
    '---\nname: s\ndescription: D.\n---\n# S\n\nSee references/guide.md.\n',
  );
  writeFileSync(join(skill, 'references', 'guide.md'), '# Guide\n');
  const outside = tempDir();
  writeFileSync(join(outside, 'creds.md'), SECRET);
  return { skill, outside };
}

/** The read's error: a skill error naming the link and the folder, never the linked file's text. */
function refusal(read: () => unknown, link: RegExp): SkillOptError {
  let caught: unknown;
  try {
    read();
  } catch (err) {
    caught = err;
  }
  assert.ok(SkillOptError.is(caught), `expected a SkillOptError, got ${String(caught)}`);
  assert.match(caught.message, /symbolic link/);
  assert.match(caught.message, link);
  assert.doesNotMatch(caught.message, /root:x/);
  return caught;
}

describe('skill folders never follow a symbolic link', () => {
  it('refuses a linked file in references/ instead of training what it points to', () => {
    const { skill, outside } = skillFolder();
    symlinkSync(join(outside, 'creds.md'), join(skill, 'references', 'creds.md'));
    const err = refusal(() => readSkillInit(skill, 200_000), /references\/creds\.md/);
    assert.equal(err.place.file, skill);
    assert.match(err.place.fix ?? '', /copy/);
  });

  it('refuses a resource folder that is itself a link', () => {
    const { skill, outside } = skillFolder();
    symlinkSync(outside, join(skill, 'scripts'));
    refusal(() => readSkillInit(skill, 200_000), /scripts/);
  });

  it('refuses a link back into the folder (a loop) and one to a whole system folder, at once', () => {
    const loop = skillFolder().skill;
    symlinkSync('..', join(loop, 'references', 'loop'));
    refusal(() => readSkillInit(loop, 200_000), /references\/loop/);
    const big = skillFolder().skill;
    symlinkSync('/usr', join(big, 'references', 'usr'));
    refusal(() => readSkillInit(big, 200_000), /references\/usr/);
  });

  it('refuses a link among the files an agent target gets beside a single SKILL.md', () => {
    const { skill, outside } = skillFolder();
    const digest = skillResourcesDigest(skill);
    assert.ok(digest);
    symlinkSync(join(outside, 'creds.md'), join(skill, 'references', 'creds.md'));
    refusal(() => skillResourcesDigest(skill), /references\/creds\.md/);
  });
});
