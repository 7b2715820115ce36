import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyEdits, summarizeReport } from '../../../src/engine/skill/applyEdits';
import { injectEmptyAppendix, replaceSlowUpdate } from '../../../src/engine/skill/document';
import {
  readSkillArtifact,
  readSkillToScore,
  writeSkillArtifact,
} from '../../../src/engine/skill/package/artifacts';
import { filesOnlyInSkill, filesToApply, keepExecBits } from '../../../src/engine/skill/package/apply';
import { readRunPackage } from '../../../src/engine/skill/package/folder';
import { DEFAULT_PACKAGE_POLICY } from '../../../src/engine/skill/package/policy';
import {
  isPackageText,
  joinPackage,
  skillBody,
  splitPackage,
  withFilesOf,
} from '../../../src/engine/skill/package/text';
import {
  chatSkillView,
  optimizerSkillView,
  touchedFiles,
  withoutPackageView,
} from '../../../src/engine/skill/package/views';
import { readSkillInit } from '../../../src/engine/skill/skillFile';
import { SkillOptError } from '../../../src/engine/errors';
import { defaultConfig } from '../../../src/engine/config/schema';
import { settingsFromConfig } from '../../../src/engine/train/fromConfig';
import type { RolloutResult } from '../../../src/protocol/records';

const tempDir = (): string => mkdtempSync(join(tmpdir(), 'skillopt-pkg-'));

const SKILL =
  '---\nname: units\ndescription: Answer unit questions.\n---\n# Units\n\nSee references/guide.md.\n';
const GUIDE = '# Guide\n\nMetres are written m.\n';

/** A skill folder with a reference file, a script, a binary asset and a data file that is not part of it. */
function skillFolder(): string {
  const d = tempDir();
  mkdirSync(join(d, 'references'));
  mkdirSync(join(d, 'scripts'));
  mkdirSync(join(d, 'assets'));
  writeFileSync(join(d, 'SKILL.md'), SKILL);
  writeFileSync(join(d, 'references', 'guide.md'), GUIDE);
  writeFileSync(join(d, 'scripts', 'check.sh'), 'echo ok\n');
  writeFileSync(join(d, 'assets', 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]));
  writeFileSync(join(d, 'tasks.jsonl'), '{"id":"a"}\n');
  return d;
}

describe('skill packages', () => {
  it('reads a folder as SKILL.md plus its text files, carrying binaries read-only and naming what it left out', () => {
    const { text, notices } = readSkillInit(skillFolder(), 200_000);
    const pkg = splitPackage(text);
    assert.equal(pkg.skill, SKILL);
    assert.deepEqual(
      pkg.files.map((f) => [f.path, f.text]),
      [
        ['references/guide.md', GUIDE],
        ['scripts/check.sh', 'echo ok\n'],
      ],
    );
    assert.deepEqual(
      pkg.readOnly.map((f) => [f.path, f.bytes]),
      [['assets/logo.png', 7]],
    );
    assert.equal(joinPackage(pkg), text);
    assert.match(notices.join('\n'), /left out: tasks\.jsonl/);
  });

  it('keeps a single SKILL.md exactly as it is', () => {
    const d = tempDir();
    writeFileSync(join(d, 'SKILL.md'), SKILL);
    const { text } = readSkillInit(join(d, 'SKILL.md'), 200_000);
    assert.equal(text, SKILL);
    assert.equal(isPackageText(text), false);
    assert.equal(optimizerSkillView(text, DEFAULT_PACKAGE_POLICY), SKILL.trim());
    assert.equal(chatSkillView(text), SKILL);
  });

  it('says so when env.skill_init names a text file that is not Markdown (likely the wrong path)', () => {
    const d = tempDir();
    writeFileSync(join(d, 'SKILL.md'), SKILL);
    writeFileSync(join(d, 'hosts'), '127.0.0.1 localhost\n');
    assert.deepEqual(readSkillInit(join(d, 'SKILL.md'), 200_000).notices, []);
    const { text, notices } = readSkillInit(join(d, 'hosts'), 200_000);
    assert.equal(text, '127.0.0.1 localhost\n');
    assert.match(notices.join('\n'), /env\.skill_init: .*hosts is not a Markdown \(\.md\) file/);
  });

  it('refuses a config, data or code file as env.skill_init before reading it', () => {
    const d = tempDir();
    for (const name of ['skillopt.yaml', 'tasks.JSONL', 'grade.py', '.env']) {
      writeFileSync(join(d, name), 'text\n');
      assert.throws(
        () => readSkillInit(join(d, name), 200_000),
        (err: unknown) =>
          SkillOptError.is(err, 'skill') &&
          err.place.key === 'env.skill_init' &&
          /not Markdown/.test(err.message) &&
          /save it as a \.md file/.test(err.place.fix ?? ''),
        name,
      );
    }
  });

  it('round-trips texts without a trailing newline and empty files', () => {
    const text = joinPackage({
      skill: 'no newline',
      files: [
        { path: 'references/a.md', text: '' },
        { path: 'references/b.md', text: 'x\n\n' },
      ],
      readOnly: [],
    });
    const pkg = splitPackage(text);
    assert.equal(pkg.skill, 'no newline');
    assert.deepEqual(
      pkg.files.map((f) => f.text),
      ['', 'x\n\n'],
    );
  });

  it('puts blocks appended to the skill at the end of SKILL.md, not after the other files', () => {
    const text = readSkillInit(skillFolder(), 200_000).text;
    const withAppendix = injectEmptyAppendix(text);
    assert.match(skillBody(withAppendix), /APPENDIX_START/);
    assert.deepEqual(splitPackage(withAppendix).files, splitPackage(text).files);
    const withSlow = replaceSlowUpdate(withAppendix, 'check the unit');
    assert.match(skillBody(withSlow), /check the unit/);
    assert.equal(splitPackage(withSlow).files[0]?.text, GUIDE);
  });

  it('applies each edit to the file it names and refuses, with the reason, a write outside the policy', () => {
    const text = readSkillInit(skillFolder(), 200_000).text;
    const { text: out, report } = applyEdits(
      text,
      [
        { op: 'append', content: '- Always give the unit.' },
        {
          op: 'insert_after',
          file: 'references/guide.md',
          target: 'Metres are written m.',
          content: 'Litres are written L.',
        },
        { op: 'append', file: 'references/new.md', content: '# New reference' },
        { op: 'append', file: 'scripts/check.sh', content: 'rm -rf /' },
        { op: 'append', file: 'assets/logo.png', content: 'x' },
        { op: 'append', file: '../outside.md', content: 'x' },
      ],
      { packagePolicy: DEFAULT_PACKAGE_POLICY },
    );
    const pkg = splitPackage(out);
    assert.match(pkg.skill, /Always give the unit\.\n$/);
    assert.equal(
      pkg.files.find((f) => f.path === 'references/guide.md')?.text,
      `${GUIDE.trimEnd()}\n\nLitres are written L.\n`,
    );
    assert.equal(pkg.files.find((f) => f.path === 'references/new.md')?.text, '# New reference\n');
    assert.equal(pkg.files.find((f) => f.path === 'scripts/check.sh')?.text, 'echo ok\n');
    assert.deepEqual(
      report.map((r) => [r.index, r.file, r.status]),
      [
        [1, undefined, 'applied_append'],
        [2, 'references/guide.md', 'applied_insert_after'],
        [3, 'references/new.md', 'applied_append'],
        [4, 'scripts/check.sh', 'skipped_outside_policy'],
        [5, 'assets/logo.png', 'skipped_outside_policy'],
        [6, '../outside.md', 'skipped_outside_policy'],
      ],
    );
    assert.match(report[3]!.error ?? '', /not editable under optimizer\.package_edits\.editable/);
    assert.match(report[4]!.error ?? '', /read-only/);
    assert.deepEqual(summarizeReport(report), { total: 6, applied: 3, skipped: 3, errors: 0 });
  });

  it('refuses a file over max_file_bytes and a file past max_files', () => {
    const text = readSkillInit(skillFolder(), 200_000).text;
    const policy = { ...DEFAULT_PACKAGE_POLICY, maxFiles: 2, maxFileBytes: 40 };
    const { report } = applyEdits(
      text,
      [
        {
          op: 'append',
          file: 'references/guide.md',
          content: 'a long line that makes the guide larger than forty bytes',
        },
        { op: 'append', file: 'references/other.md', content: 'x' },
      ],
      { packagePolicy: policy },
    );
    assert.deepEqual(
      report.map((r) => r.status),
      ['skipped_outside_policy', 'skipped_outside_policy'],
    );
    assert.match(report[0]!.error ?? '', /max_file_bytes \(40\)/);
    assert.match(report[1]!.error ?? '', /max_files \(2\)/);
  });

  it('refuses an edit naming another file of a single-file skill', () => {
    const { text, report } = applyEdits(SKILL, [{ op: 'append', file: 'references/x.md', content: 'x' }]);
    assert.equal(text, SKILL);
    assert.equal(report[0]?.status, 'skipped_outside_policy');
    assert.match(
      report[0]?.error ?? '',
      /single file, so references\/x\.md cannot be added: name the skill's folder/,
    );
  });

  it('lets edits add files to a skill given as a folder that holds SKILL.md alone, and tells the optimizer', () => {
    const d = tempDir();
    writeFileSync(join(d, 'SKILL.md'), SKILL);
    const cfg = defaultConfig();
    cfg.env.skill_init = d;
    const policy = settingsFromConfig(cfg).packagePolicy;
    assert.equal(policy.folder, true);
    const text = readSkillInit(d, 200_000).text;
    assert.equal(text, SKILL, 'the text of a folder with SKILL.md alone is the single-file text');
    const view = optimizerSkillView(text, policy);
    assert.match(view, /This skill is a folder \(SKILL\.md is the text above; no other files yet\)/);
    assert.equal(
      optimizerSkillView(text, DEFAULT_PACKAGE_POLICY),
      SKILL.trim(),
      'a single file has no listing',
    );
    const added = applyEdits(text, [{ op: 'append', file: 'references/notes.md', content: '# Notes' }], {
      packagePolicy: policy,
    });
    assert.equal(added.report[0]?.status, 'applied_append');
    assert.equal(splitPackage(added.text).files[0]?.path, 'references/notes.md');
    cfg.env.skill_init = join(d, 'SKILL.md');
    assert.equal(settingsFromConfig(cfg).packagePolicy.folder, undefined);
  });

  it('shows the optimizer the tree and the touched files, and a chat target the referenced files', () => {
    const text = readSkillInit(skillFolder(), 200_000).text;
    const view = optimizerSkillView(text, DEFAULT_PACKAGE_POLICY, ['scripts/check.sh']);
    assert.match(view, /- references\/guide\.md \(\d+ bytes, editable\)/);
    assert.match(view, /- scripts\/check\.sh \(8 bytes, read-only, shown below\)/);
    assert.match(view, /- assets\/logo\.png \(7 bytes, binary or too large: read-only, not shown\)/);
    assert.match(view, /<skill_file path="scripts\/check\.sh">\necho ok\n<\/skill_file>/);
    assert.doesNotMatch(view, /Metres are written/);
    assert.equal(withoutPackageView(`${view}\n`).trim(), SKILL.trim());
    const chat = chatSkillView(text);
    assert.match(
      chat,
      /<skill_file path="references\/guide\.md">\n# Guide\n\nMetres are written m\.\n<\/skill_file>/,
    );
    assert.doesNotMatch(chat, /echo ok/);
    const agentRun = (detail: string): RolloutResult =>
      ({ agent_run: { tool_calls: [{ name: 'Read', detail }] } }) as unknown as RolloutResult;
    assert.deepEqual(touchedFiles(text, [agentRun('/w/.claude/skills/units/references/guide.md')]), [
      'references/guide.md',
    ]);
    assert.deepEqual(touchedFiles(text, [{} as RolloutResult]), ['references/guide.md']);
  });

  it('writes run-folder copies as SKILL.md plus a package folder and reads them back exactly', () => {
    const text = readSkillInit(skillFolder(), 200_000).text;
    const edited = applyEdits(text, [{ op: 'append', file: 'references/new.md', content: 'n' }]).text;
    const run = tempDir();
    const file = join(run, 'skill_v0001.md');
    writeSkillArtifact(file, edited);
    assert.equal(readFileSync(file, 'utf8'), SKILL);
    assert.equal(readFileSync(join(run, 'skill_v0001', 'references', 'new.md'), 'utf8'), 'n\n');
    assert.deepEqual(
      [...readFileSync(join(run, 'skill_v0001', 'assets', 'logo.png'))],
      [0x89, 0x50, 0x4e, 0x47, 0, 1, 2],
    );
    assert.equal(readSkillArtifact(file), edited);
    assert.equal(readRunPackage(join(run, 'skill_v0001')), edited);
    // A rewrite of the same snapshot drops a file the new version does not have.
    writeSkillArtifact(file, text);
    assert.equal(existsSync(join(run, 'skill_v0001', 'references', 'new.md')), false);
    assert.equal(
      withFilesOf(text, 'new body\n'),
      joinPackage({ ...splitPackage(text), skill: 'new body\n' }),
    );
  });

  it('reads the whole previous version when a kill left a package folder between its two renames', () => {
    const text = readSkillInit(skillFolder(), 200_000).text;
    const run = tempDir();
    const file = join(run, 'best_skill.md');
    writeSkillArtifact(file, text);
    renameSync(join(run, 'best_skill'), join(run, 'best_skill.old-99999'));
    mkdirSync(join(run, 'best_skill.tmp-99999'));
    assert.equal(readSkillArtifact(file), text);
    const edited = applyEdits(text, [{ op: 'append', file: 'references/new.md', content: 'n' }]).text;
    writeSkillArtifact(file, edited);
    assert.equal(readSkillArtifact(file), edited);
    assert.deepEqual(readdirSync(run).sort(), ['best_skill', 'best_skill.md']);
  });

  it('scores a skill folder, or a run skill file with its folder beside it, whole (eval and Evaluate)', () => {
    const folder = skillFolder();
    const text = readSkillInit(folder, 200_000).text;
    assert.equal(
      readSkillToScore(folder, (p) => readFileSync(p, 'utf8')),
      text,
    );
    const run = tempDir();
    writeSkillArtifact(join(run, 'best_skill.md'), text);
    assert.equal(
      readSkillToScore(join(run, 'best_skill.md'), (p) => readFileSync(p, 'utf8')),
      text,
    );
    writeFileSync(join(run, 'plain.md'), SKILL);
    assert.equal(
      readSkillToScore(join(run, 'plain.md'), (p) => readFileSync(p, 'utf8')),
      SKILL,
    );
    // A skill file not named .md has no folder beside it: it is not taken for its own package folder.
    for (const name of ['skill.txt', 'SKILL']) {
      writeFileSync(join(run, name), SKILL);
      assert.equal(
        readSkillToScore(join(run, name), (p) => readFileSync(p, 'utf8')),
        SKILL,
      );
    }
  });

  it('writes a single-file skill as one file, as before', () => {
    const run = tempDir();
    writeSkillArtifact(join(run, 'best_skill.md'), SKILL);
    assert.equal(existsSync(join(run, 'best_skill')), false);
    assert.equal(readSkillArtifact(join(run, 'best_skill.md')), SKILL);
  });

  it('lists the files of a best skill folder that the trained folder lacks or holds otherwise (Apply Best)', () => {
    const trained = skillFolder();
    const best = tempDir();
    writeSkillArtifact(
      join(best, 'best_skill.md'),
      applyEdits(readSkillInit(trained, 200_000).text, [
        { op: 'append', content: '- Always give the unit.' },
        { op: 'append', file: 'references/new.md', content: 'n' },
      ]).text,
    );
    assert.deepEqual(
      filesToApply(join(best, 'best_skill'), trained).map((f) => [f.path, f.status]),
      [
        ['SKILL.md', 'changed'],
        ['references/new.md', 'added'],
      ],
    );
  });

  it('keeps a script executable when Apply Best writes it as bytes (new or changed)', () => {
    const trained = skillFolder();
    const best = tempDir();
    mkdirSync(join(best, 'scripts'));
    writeFileSync(join(best, 'SKILL.md'), readFileSync(join(trained, 'SKILL.md')));
    writeFileSync(join(best, 'scripts', 'lint.sh'), '#!/bin/sh\necho ok\n', { mode: 0o755 });
    writeFileSync(join(best, 'scripts', 'notes.txt'), 'plain\n', { mode: 0o644 });
    const files = filesToApply(best, trained);
    assert.deepEqual(
      files.map((f) => [f.path, f.status, f.execBits]),
      [
        ['scripts/lint.sh', 'added', 0o111],
        ['scripts/notes.txt', 'added', undefined],
      ],
    );
    // What the WorkspaceEdit does: bytes only, with the default mode.
    mkdirSync(join(trained, 'scripts'), { recursive: true });
    for (const f of files) writeFileSync(join(trained, f.path), f.bytes, { mode: 0o644 });
    keepExecBits(trained, files);
    assert.equal(statSync(join(trained, 'scripts', 'lint.sh')).mode & 0o777, 0o755);
    assert.equal(statSync(join(trained, 'scripts', 'notes.txt')).mode & 0o777, 0o644);
  });

  it('names the files only the trained folder holds (Apply Best keeps them)', () => {
    const trained = skillFolder();
    const best = tempDir();
    writeSkillArtifact(join(best, 'best_skill.md'), readSkillInit(trained, 200_000).text);
    writeFileSync(join(trained, 'references', 'notes.md'), 'mine\n');
    assert.deepEqual(filesOnlyInSkill(join(best, 'best_skill'), trained), ['references/notes.md']);
  });

  it('refuses to apply a file through a symbolic link out of the skill folder, naming the file', () => {
    const trained = skillFolder();
    const best = tempDir();
    writeSkillArtifact(
      join(best, 'best_skill.md'),
      applyEdits(readSkillInit(trained, 200_000).text, [
        { op: 'append', file: 'references/guide.md', content: '- More.' },
      ]).text,
    );
    const outside = tempDir();
    writeFileSync(join(outside, 'guide.md'), GUIDE);
    rmSync(join(trained, 'references'), { recursive: true });
    symlinkSync(outside, join(trained, 'references'));
    assert.throws(
      () => filesToApply(join(best, 'best_skill'), trained),
      /references\/guide\.md through the symbolic link/,
    );
    assert.equal(readFileSync(join(outside, 'guide.md'), 'utf8'), GUIDE);
  });
});
