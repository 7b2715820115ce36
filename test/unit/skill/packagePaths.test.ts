import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyEdits } from '../../../src/engine/skill/applyEdits';
import { readSkillArtifact, writeSkillArtifact } from '../../../src/engine/skill/package/artifacts';
import { DEFAULT_PACKAGE_POLICY, policyGlobNotices } from '../../../src/engine/skill/package/policy';
import { prepareRun } from '../../../src/engine/run';
import { packageExample } from '../train/packageExample';
import { splitPackage } from '../../../src/engine/skill/package/text';
import { optimizerSkillView } from '../../../src/engine/skill/package/views';
import { readSkillInit } from '../../../src/engine/skill/skillFile';

const tempDir = (): string => mkdtempSync(join(tmpdir(), 'skillopt-paths-'));

function folder(): string {
  const d = tempDir();
  mkdirSync(join(d, 'references', 'forms'), { recursive: true });
  mkdirSync(join(d, 'assets'));
  writeFileSync(join(d, 'SKILL.md'), '---\nname: x\ndescription: Forms.\n---\n# X\n');
  writeFileSync(join(d, 'references', 'guide.md'), '# Guide\n');
  writeFileSync(join(d, 'references', 'forms', 'w2.md'), '# W-2\n');
  writeFileSync(join(d, 'assets', 'logo.png'), Buffer.from([0x89, 0x50, 0, 1]));
  return d;
}

describe('files an edit adds beside the others of a skill folder', () => {
  it('refuses a path through a file, over a folder, or differing only in case, and the run can still write the skill', () => {
    const text = readSkillInit(folder(), 200_000).text;
    const policy = { ...DEFAULT_PACKAGE_POLICY, editable: ['SKILL.md', 'references/**', 'assets/**'] };
    const { text: out, report } = applyEdits(
      text,
      [
        { op: 'append', file: 'references/guide.md/more.md', content: 'a' },
        { op: 'append', file: 'references/forms', content: 'b' },
        { op: 'append', file: 'references/Guide.md', content: 'c' },
        { op: 'append', file: 'assets/logo.png/x.md', content: 'd' },
        { op: 'append', file: 'references/forms/1099.md', content: '# 1099' },
      ],
      { packagePolicy: policy },
    );
    assert.deepEqual(
      report.map((r) => [r.file, r.status]),
      [
        ['references/guide.md/more.md', 'skipped_outside_policy'],
        ['references/forms', 'skipped_outside_policy'],
        ['references/Guide.md', 'skipped_outside_policy'],
        ['assets/logo.png/x.md', 'skipped_outside_policy'],
        ['references/forms/1099.md', 'applied_append'],
      ],
    );
    assert.match(report[0]!.error ?? '', /inside references\/guide\.md, which is a file/);
    assert.match(report[1]!.error ?? '', /is a folder of the skill/);
    assert.match(report[2]!.error ?? '', /only in case/);
    assert.match(report[3]!.error ?? '', /inside assets\/logo\.png/);
    assert.deepEqual(
      splitPackage(out).files.map((f) => f.path),
      ['references/forms/1099.md', 'references/forms/w2.md', 'references/guide.md'],
    );
    const run = tempDir();
    writeSkillArtifact(join(run, 'skill_v0001.md'), out);
    assert.deepEqual(readdirSync(join(run, 'skill_v0001', 'references', 'forms')).sort(), [
      '1099.md',
      'w2.md',
    ]);
    assert.equal(readSkillArtifact(join(run, 'skill_v0001.md')), out);
  });

  it('refuses a file outside references/, scripts/, assets/ (it would be lost on resume) and in a tool folder', () => {
    const skill = folder();
    const text = readSkillInit(skill, 200_000).text;
    const policy = { ...DEFAULT_PACKAGE_POLICY, editable: ['**'] };
    const { text: out, report } = applyEdits(
      text,
      [
        { op: 'append', file: 'docs/new.md', content: 'a' },
        { op: 'append', file: 'NOTES.md', content: 'b' },
        { op: 'append', file: 'scripts/node_modules/x.js', content: 'c' },
        { op: 'append', file: 'scripts/__pycache__/x.md', content: 'd' },
        { op: 'append', file: 'scripts/new.sh', content: 'echo e' },
      ],
      { packagePolicy: policy },
    );
    assert.deepEqual(
      report.map((r) => r.status),
      [
        'skipped_outside_policy',
        'skipped_outside_policy',
        'skipped_outside_policy',
        'skipped_outside_policy',
        'applied_append',
      ],
    );
    assert.match(report[0]!.error ?? '', /docs\/new\.md is not in references\/, scripts\/, assets\//);
    assert.match(report[2]!.error ?? '', /not part of the skill \(node_modules\/, __pycache__\/\)/);
    const run = tempDir();
    writeSkillArtifact(join(run, 'best_skill.md'), out);
    assert.equal(readSkillArtifact(join(run, 'best_skill.md')), out);
  });

  it('shows the optimizer a file already over max_file_bytes as read-only, since every edit of it is refused', () => {
    const d = folder();
    writeFileSync(join(d, 'references', 'api.md'), `# API\n${'x'.repeat(50)}\n`);
    const text = readSkillInit(d, 200_000).text;
    const policy = { ...DEFAULT_PACKAGE_POLICY, maxFileBytes: 40, folder: true };
    const view = optimizerSkillView(text, policy, []);
    assert.match(view, /- references\/api\.md \(57 bytes, read-only: over the size limit for edited files\)/);
    assert.match(view, /- references\/guide\.md \(8 bytes, editable\)/);
    const { report } = applyEdits(
      text,
      [{ op: 'replace', file: 'references/api.md', target: '# API', content: '# A' }],
      { packagePolicy: policy },
    );
    assert.match(report[0]!.error ?? '', /max_file_bytes \(40\)/);
  });

  it('says which optimizer.package_edits globs can match nothing an edit may change, before the run', () => {
    assert.deepEqual(
      policyGlobNotices({
        editable: ['SKILL.md', '*.md', '**/*.md', 'references/**', 'docs/**', 'scripts', 'NOTES.md'],
        read_only: ['{references,scripts}/x.md', 'evals/**'],
      }).map((n) => n.replace(/ matches nothing.*/, '')),
      [
        'optimizer.package_edits.editable: "docs/**"',
        'optimizer.package_edits.editable: "scripts"',
        'optimizer.package_edits.editable: "NOTES.md"',
        'optimizer.package_edits.read_only: "evals/**"',
      ],
    );
    const root = tempDir();
    const run = prepareRun({
      configPath: packageExample(root),
      outDir: join(root, 'run'),
      overrides: ['optimizer.package_edits.editable=["SKILL.md","docs/**"]'],
      models: { trustedWorkspace: true },
    });
    assert.ok(
      run.warnings.some((w) =>
        /package_edits\.editable: "docs\/\*\*" matches nothing an edit may change/.test(w),
      ),
      run.warnings.join('\n'),
    );
    assert.ok(!run.warnings.some((w) => w.includes('max_files')), run.warnings.join('\n'));
  });

  it('says before the run when the folder already holds max_files files, SKILL.md included', () => {
    const root = tempDir();
    // The example folder: SKILL.md, a reference and a binary asset.
    const run = (max: number): string[] =>
      prepareRun({
        configPath: packageExample(root),
        outDir: join(root, `run${max}`),
        overrides: [`optimizer.package_edits.max_files=${max}`],
        models: { trustedWorkspace: true },
      }).warnings.filter((w) => w.includes('max_files'));
    assert.deepEqual(run(4), []);
    assert.deepEqual(run(3), [
      'optimizer.package_edits.max_files: the skill folder already has 3 files (SKILL.md included), so no edit may add one (the limit is 3; raise it to let the optimizer add reference files)',
    ]);
  });
});
