import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyEdits, summarizeReport } from '../../../src/engine/skill/applyEdits';
import { DEFAULT_PACKAGE_POLICY } from '../../../src/engine/skill/package/policy';
import { splitPackage } from '../../../src/engine/skill/package/text';
import { readSkillInit } from '../../../src/engine/skill/skillFile';

const SKILL =
  '---\nname: units\ndescription: Answer unit questions.\n---\n# Units\n\nSee references/guide.md.\n';
const FOLDER_POLICY = { ...DEFAULT_PACKAGE_POLICY, folder: true };

/** A skill folder holding SKILL.md and, unless `alone`, references/guide.md. */
function skillText(alone = false): string {
  const d = mkdtempSync(join(tmpdir(), 'skillopt-pkgedit-'));
  writeFileSync(join(d, 'SKILL.md'), SKILL);
  if (!alone) {
    mkdirSync(join(d, 'references'));
    writeFileSync(join(d, 'references', 'guide.md'), '# Guide\n');
  }
  return readSkillInit(d, 200_000).text;
}

describe('links a trained edit adds to a skill folder', () => {
  it('refuses an edit of SKILL.md that links to a file the package does not have, with the reason', () => {
    const text = skillText();
    const { text: out, report } = applyEdits(
      text,
      [
        { op: 'append', content: 'Read [the table](references/missing.md) first.' },
        { op: 'append', content: 'Units follow references/guide.md.' },
      ],
      { packagePolicy: FOLDER_POLICY },
    );
    assert.deepEqual(
      report.map((r) => r.status),
      ['skipped_outside_policy', 'applied_append'],
    );
    assert.match(report[0]!.error ?? '', /links to references\/missing\.md, which the skill does not have/);
    assert.doesNotMatch(splitPackage(out).skill, /missing\.md/);
    assert.match(splitPackage(out).skill, /Units follow references\/guide\.md\./);
    assert.deepEqual(summarizeReport(report), { total: 2, applied: 1, skipped: 1, errors: 0 });
  });

  it('checks a folder that holds SKILL.md alone, whose text carries no other file', () => {
    const { report } = applyEdits(skillText(true), [{ op: 'append', content: 'Run scripts/check.sh.' }], {
      packagePolicy: FOLDER_POLICY,
    });
    assert.equal(report[0]?.status, 'skipped_outside_policy');
    assert.match(report[0]?.error ?? '', /scripts\/check\.sh/);
  });

  it('accepts the link when an edit of the same set adds the file, before or after it', () => {
    const { text: out, report } = applyEdits(
      skillText(),
      [
        { op: 'append', content: 'Read references/table.md first.' },
        { op: 'append', file: 'references/table.md', content: '# Table' },
      ],
      { packagePolicy: FOLDER_POLICY },
    );
    assert.deepEqual(
      report.map((r) => r.status),
      ['applied_append', 'applied_append'],
    );
    assert.match(splitPackage(out).skill, /references\/table\.md/);
  });

  it('refuses the link when the edit that would add the file is itself refused', () => {
    const { text: out, report } = applyEdits(
      skillText(),
      [
        { op: 'append', content: 'Run scripts/new.sh.' },
        // scripts/ is not editable by default, so this file is never added.
        { op: 'append', file: 'scripts/new.sh', content: '#!/bin/sh\necho ok' },
      ],
      { packagePolicy: FOLDER_POLICY },
    );
    assert.deepEqual(
      report.map((r) => r.status),
      ['skipped_outside_policy', 'skipped_outside_policy'],
    );
    assert.match(report[0]!.error ?? '', /scripts\/new\.sh/);
    assert.match(report[1]!.error ?? '', /not editable/);
    assert.doesNotMatch(out, /scripts\/new\.sh/);
  });

  it('leaves a link SKILL.md already had alone, and a lone SKILL.md unchecked', () => {
    const broken = SKILL.replace('references/guide.md', 'references/gone.md');
    const d = mkdtempSync(join(tmpdir(), 'skillopt-pkgedit-'));
    writeFileSync(join(d, 'SKILL.md'), broken);
    const { report } = applyEdits(
      readSkillInit(d, 200_000).text,
      [{ op: 'append', content: 'Again: references/gone.md.' }],
      { packagePolicy: FOLDER_POLICY },
    );
    assert.equal(report[0]?.status, 'applied_append');
    // A single SKILL.md's siblings on disk are not part of its text: nothing to check against.
    const single = applyEdits(SKILL, [{ op: 'append', content: 'See references/other.md.' }], {
      packagePolicy: DEFAULT_PACKAGE_POLICY,
    });
    assert.equal(single.report[0]?.status, 'applied_append');
  });
});

describe('optimizer.package_edits.max_files', () => {
  it('counts SKILL.md: a folder of SKILL.md and one reference is full at max_files 2', () => {
    const policy = { ...FOLDER_POLICY, maxFiles: 2 };
    const { report } = applyEdits(
      skillText(),
      [
        { op: 'append', file: 'references/guide.md', content: 'More.' },
        { op: 'append', file: 'references/other.md', content: 'x' },
      ],
      { packagePolicy: policy },
    );
    assert.deepEqual(
      report.map((r) => r.status),
      ['applied_append', 'skipped_outside_policy'],
    );
    assert.match(
      report[1]!.error ?? '',
      /would make the skill 3 files \(SKILL\.md included\), over .*max_files \(2\)/,
    );
    const roomy = applyEdits(skillText(), [{ op: 'append', file: 'references/other.md', content: 'x' }], {
      packagePolicy: { ...FOLDER_POLICY, maxFiles: 3 },
    });
    assert.equal(roomy.report[0]?.status, 'applied_append');
  });
});
