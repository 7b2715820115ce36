import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepareRun } from '../../../src/engine/run';
import { RunLayout, STEP_FILE } from '../../../src/engine/store/layout';
import { runSim, tempDir } from '../train/helpers';
import { bothFileSteps, filesOf, GUIDE, packageExample } from '../train/packageExample';
import { cliProcess as cli } from '../../support/cliProcess';

/**
 * `apply-edits` on a skill folder replays a training step's update: the run's own patch files
 * (edits naming `file`) applied to the step's skill give the step's candidate folder.
 */
describe('skillopt apply-edits on a skill folder', function () {
  this.timeout(240_000);
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  let stepDir: string;
  /** The skill folder the step started from, rebuilt from its candidate and candidate_files.json. */
  let start: string;

  before(async () => {
    tmp = tempDir('skillopt-apply-folder-');
    config = packageExample(tmp.path);
    const out = join(tmp.path, 'run');
    const { outcome } = await runSim(
      prepareRun({ configPath: config, outDir: out, overrides: ['cache.enabled=false'] }),
    );
    assert.equal(outcome.status, 'finished');
    const step = bothFileSteps(out)[0];
    assert.ok(step !== undefined, 'a step edited SKILL.md and the reference file');
    stepDir = new RunLayout(out).stepDir(step);
    start = join(tmp.path, 'start');
    cpSync(join(stepDir, 'candidate_skill'), start, { recursive: true });
    const changed = JSON.parse(readFileSync(join(stepDir, STEP_FILE.candidateFiles), 'utf8')) as Array<{
      path: string;
      status: string;
      before: string;
    }>;
    for (const c of changed) {
      if (c.status === 'added') rmSync(join(start, c.path));
      else writeFileSync(join(start, c.path), c.before);
    }
  });
  after(() => tmp.cleanup());

  /** apply-edits of the step's ranked_edits.json on `skill` under `cfg`. */
  const replay = (skill: string, cfg: string, ...more: string[]): ReturnType<typeof cli> =>
    cli([
      'apply-edits',
      '--skill',
      skill,
      '--edits',
      join(stepDir, STEP_FILE.ranked),
      '--config',
      cfg,
      ...more,
    ]);

  const fresh = (name: string): string => {
    const dir = join(tmp.path, name);
    cpSync(start, dir, { recursive: true });
    return dir;
  };

  it("writes the step's candidate folder from the run's ranked_edits.json, file by file", () => {
    const skill = fresh('replay');
    const r = replay(skill, config, '--write');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(filesOf(skill), filesOf(join(stepDir, 'candidate_skill')));
    assert.match(r.stderr, new RegExp(`applied_\\w+ ${GUIDE.replace('.', '\\.')}`));
    assert.match(r.stderr, new RegExp(`Written: .*SKILL\\.md, .*${GUIDE.replace('.', '\\.')}`));
  });

  it('prints a diff of every changed file without --write, and leaves the folder alone', () => {
    const skill = fresh('dry');
    const r = cli(['apply-edits', '--skill', skill, '--edits', join(stepDir, STEP_FILE.merged)]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^\+\+\+ b\/SKILL\.md/m);
    assert.match(r.stdout, new RegExp(`^\\+\\+\\+ b/${GUIDE.replace('.', '\\.')}`, 'm'));
    assert.deepEqual(filesOf(skill), filesOf(start));
  });

  it('skips an edit outside optimizer.package_edits with the reason, and says so', () => {
    const skill = fresh('policy');
    const strict = join(tmp.path, 'strict.yaml');
    const text = readFileSync(config, 'utf8').replace(
      /\noptimizer:\n/,
      '\noptimizer:\n  package_edits:\n    read_only: ["references/**"]\n',
    );
    writeFileSync(strict, text);
    const r = replay(skill, strict, '--write');
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `skipped_outside_policy ${GUIDE.replace('.', '\\.')}: ${GUIDE.replace('.', '\\.')} is read-only under optimizer\\.package_edits\\.read_only`,
      ),
    );
    assert.match(
      r.stderr,
      /Note: \d+ edits? not applied: outside optimizer\.package_edits \(policy from .*strict\.yaml\)/,
    );
    assert.equal(readFileSync(join(skill, GUIDE), 'utf8'), readFileSync(join(start, GUIDE), 'utf8'));
    assert.notEqual(
      readFileSync(join(skill, 'SKILL.md'), 'utf8'),
      readFileSync(join(start, 'SKILL.md'), 'utf8'),
    );
    const json = replay(fresh('policy-json'), strict, '--json');
    const out = JSON.parse(json.stdout) as {
      report: Array<{ status: string; file?: string; error?: string }>;
      notes: string[];
    };
    assert.ok(
      out.report.some((row) => row.status === 'skipped_outside_policy' && row.file === GUIDE && row.error),
    );
    assert.ok(out.notes.some((n) => /not applied: outside optimizer\.package_edits/.test(n)));
  });

  it('adds a file to a skill folder that holds SKILL.md alone', () => {
    const skill = join(tmp.path, 'alone');
    mkdirSync(skill);
    writeFileSync(join(skill, 'SKILL.md'), '---\nname: alone\ndescription: d\n---\n# Alone\n');
    const edits = join(tmp.path, 'add-file.json');
    writeFileSync(
      edits,
      JSON.stringify([{ op: 'append', file: 'references/notes.md', content: '# Notes\n\nUse metres.' }]),
    );
    const r = cli(['apply-edits', '--skill', skill, '--edits', edits, '--write']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(join(skill, 'references', 'notes.md'), 'utf8'), '# Notes\n\nUse metres.\n');
  });

  it('refuses edits of other files on SKILL.md alone, naming the folder to pass', () => {
    const skill = fresh('one-file');
    const r = cli([
      'apply-edits',
      '--skill',
      join(skill, 'SKILL.md'),
      '--edits',
      join(stepDir, STEP_FILE.merged),
      '--write',
    ]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(`edit \\d+ names ${GUIDE.replace('.', '\\.')}, but the skill given is one file`),
    );
    assert.match(
      r.stderr,
      new RegExp(`pass the skill folder: --skill ${skill.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    );
    assert.deepEqual(filesOf(skill), filesOf(start));
  });
});
