import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  agentSkillsLocations,
  discoverSkills,
  readSkill,
  resolveLocation,
  skillFilesIn,
  skillLocations,
} from '../../../src/extension/skills/discovery';
import { formatAgo, latestRunBySkill, trainedSkillPath } from '../../../src/extension/skills/skillRuns';
import { skillRow, sortSkills } from '../../../src/extension/skills/skillNodes';
import { descriptionProblem, nameProblem, skillTemplate } from '../../../src/extension/skills/skillTemplate';
import { parseFrontMatter } from '../../../src/engine/skill/frontMatter';
import type { RunView } from '../../../src/extension/runs/liveState';

function skill(dir: string, name: string, front = `name: ${name}\ndescription: Does ${name}.\n`): string {
  mkdirSync(join(dir, name), { recursive: true });
  const file = join(dir, name, 'SKILL.md');
  writeFileSync(file, `---\n${front}---\n\n# ${name}\n`);
  return file;
}

function run(dir: string, config: Record<string, unknown>, extra: Partial<RunView> = {}): RunView {
  return {
    dir,
    name: dir.split('/').pop()!,
    status: 'finished',
    writer: 'skillopt-vscode',
    config,
    history: [],
    epochs: [],
    ...extra,
  } as RunView;
}

/** A fresh folder per test, removed after it; read it through the returned function. */
function tempDir(): () => string {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-skills-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  return () => dir;
}

describe('Skills view: discovery', () => {
  const tmp = tempDir();

  it('reads chat.agentSkillsLocations as VS Code writes it (path → boolean) and as an array', () => {
    assert.deepEqual(agentSkillsLocations({ 'my-skills': true, '~/.copilot/skills': true, old: false }), {
      paths: ['my-skills', '~/.copilot/skills'],
      problems: [],
    });
    assert.deepEqual(agentSkillsLocations(['a', ' b ']), { paths: ['a', 'b'], problems: [] });
    assert.deepEqual(agentSkillsLocations(undefined), { paths: [], problems: [] });
  });

  it('names every entry of the setting it cannot use instead of dropping it silently', () => {
    const bad = agentSkillsLocations({ x: 'yes', y: true });
    assert.deepEqual(bad.paths, ['y']);
    assert.match(bad.problems[0] ?? '', /chat\.agentSkillsLocations\["x"\] should be true or false/);
    assert.match(agentSkillsLocations([3]).problems[0] ?? '', /\[0\] is not a folder path/);
    assert.match(agentSkillsLocations('skills').problems[0] ?? '', /should map folder paths/);
  });

  it('resolves ~ against the home folder, relative paths against every workspace folder', () => {
    assert.deepEqual(resolveLocation('~/.claude/skills', ['/w1'], '/home/u'), ['/home/u/.claude/skills']);
    assert.deepEqual(resolveLocation('~', ['/w1'], '/home/u'), ['/home/u']);
    assert.deepEqual(resolveLocation('team/skills', ['/w1', '/w2']), ['/w1/team/skills', '/w2/team/skills']);
    assert.deepEqual(resolveLocation('/abs/skills/', ['/w1']), ['/abs/skills']);
  });

  it('lists the three project locations per folder first, then the setting, each folder once', () => {
    const { locations } = skillLocations(['/w'], { '.github/skills': true, 'more/skills': true }, '/h');
    assert.deepEqual(
      locations.map((l) => [l.dir, l.host]),
      [
        ['/w/.github/skills', 'copilot'],
        ['/w/.claude/skills', 'claude'],
        ['/w/.agents/skills', 'codex'],
        ['/w/more/skills', 'setting'],
      ],
    );
  });

  it("gives the setting's personal folders (VS Code's default value) to their agents", () => {
    const defaults = { '~/.agents/skills': true, '~/.copilot/skills': true, '~/.claude/skills': true };
    const { locations } = skillLocations([], defaults, '/h');
    assert.deepEqual(
      locations.map((l) => [l.dir, l.host]),
      [
        ['/h/.agents/skills', 'codex'],
        ['/h/.copilot/skills', 'copilot'],
        ['/h/.claude/skills', 'claude'],
      ],
    );
  });

  it('finds <location>/<name>/SKILL.md, following symlinked skill folders, skipping other entries', () => {
    const loc = join(tmp(), '.agents', 'skills');
    const a = skill(loc, 'alpha');
    skill(join(tmp(), 'elsewhere'), 'linked');
    symlinkSync(join(tmp(), 'elsewhere', 'linked'), join(loc, 'linked'));
    mkdirSync(join(loc, 'no-skill-file'));
    writeFileSync(join(loc, 'README.md'), 'not a skill');
    mkdirSync(join(loc, 'deep', 'nested'), { recursive: true });
    writeFileSync(join(loc, 'deep', 'nested', 'SKILL.md'), '---\nname: nested\n---\n');
    assert.deepEqual(skillFilesIn(loc), [a, join(loc, 'linked', 'SKILL.md')]);
    assert.deepEqual(skillFilesIn(join(tmp(), 'missing')), []);
  });

  it('reads name and description from the front matter, the folder name when it has none, and evals', () => {
    const loc = join(tmp(), 'skills');
    const named = readSkill(
      skill(loc, 'pdf-forms', 'name: pdf-forms\ndescription: Fills PDF forms.\n'),
      'claude',
    );
    assert.equal(named.name, 'pdf-forms');
    assert.equal(named.description, 'Fills PDF forms.');
    assert.equal(named.hasEvals, false);
    assert.deepEqual(named.problems, []);

    mkdirSync(join(loc, 'plain'));
    writeFileSync(join(loc, 'plain', 'SKILL.md'), '# Plain skill without front matter\n');
    mkdirSync(join(loc, 'plain', 'evals'));
    writeFileSync(join(loc, 'plain', 'evals', 'evals.json'), '{"evals": []}');
    const plain = readSkill(join(loc, 'plain', 'SKILL.md'), 'codex');
    assert.equal(plain.name, 'plain');
    assert.equal(plain.description, undefined);
    assert.equal(plain.hasEvals, true);
    // The skill lint's finding: a host skips a SKILL.md without front matter.
    assert.deepEqual(
      plain.problems.map((p) => [p.severity, p.line, p.message.slice(0, 15)]),
      [['error', 0, 'no front matter']],
    );
  });

  it("reports the lint's findings with their severity: a name that is not its folder's", () => {
    const info = readSkill(
      skill(join(tmp(), 'skills'), 'pdf', 'name: pdf-forms\ndescription: Fills forms.\n'),
      'claude',
    );
    assert.equal(info.name, 'pdf-forms');
    assert.deepEqual(
      info.problems.map((p) => [p.severity, p.line]),
      [['error', 1]],
    );
    assert.match(info.problems[0]?.message ?? '', /not the name of its folder "pdf"/);
  });

  it('reports YAML errors of the front matter with their line', () => {
    const file = skill(join(tmp(), 'skills'), 'broken', 'name: broken\ndescription: [unclosed\n');
    const info = readSkill(file, 'copilot');
    assert.equal(info.name, 'broken', 'the folder name stands in');
    assert.deepEqual(
      info.problems.map((p) => [p.severity, p.line]),
      [['error', 2]],
    );
  });

  it('lists a skill reached from two locations once, under the first', () => {
    const loc = join(tmp(), '.claude', 'skills');
    skill(loc, 'one');
    const skills = discoverSkills([
      { dir: loc, host: 'claude' },
      { dir: loc, host: 'setting' },
    ]);
    assert.deepEqual(
      skills.map((s) => [s.name, s.host]),
      [['one', 'claude']],
    );
  });
});

describe('Skills view: trained skills and their latest run', () => {
  const tmp = tempDir();

  it("takes config.json's skill_init (absolute, a folder, or relative to the config's folder), else the origin", () => {
    const file = skill(join(tmp(), 'proj'), 'house');
    const runs = join(tmp(), 'proj', 'house', '.skillopt', 'runs');
    assert.equal(trainedSkillPath({ dir: join(runs, 'a'), config: { skill_init: file } }), file);
    assert.equal(
      trainedSkillPath({ dir: join(runs, 'b'), config: { skill_init: join(tmp(), 'proj', 'house') } }),
      file,
    );
    assert.equal(trainedSkillPath({ dir: join(runs, 'c'), config: { skill_init: 'SKILL.md' } }), file);
    // Relative, outside the default place: nothing to resolve it against.
    assert.equal(
      trainedSkillPath({ dir: join(tmp(), 'x', 'run'), config: { skill_init: 'SKILL.md' } }),
      undefined,
    );
    assert.equal(trainedSkillPath({ dir: join(tmp(), 'x', 'run'), config: {} }, file), file);
    assert.equal(
      trainedSkillPath({ dir: join(runs, 'd'), config: { skill_init: '/gone/SKILL.md' } }),
      undefined,
    );
  });

  it("keeps each skill's newest run by when its record was last written", () => {
    const file = skill(tmp(), 'house');
    const older = join(tmp(), 'r1');
    const newer = join(tmp(), 'r2');
    for (const d of [older, newer]) {
      mkdirSync(d);
      writeFileSync(join(d, 'history.json'), '[]');
    }
    utimesSync(join(older, 'history.json'), 1000, 1000);
    utimesSync(join(newer, 'history.json'), 2000, 2000);
    const runs = [run(newer, { skill_init: file }), run(older, { skill_init: file })];
    const latest = latestRunBySkill(runs, () => undefined);
    assert.equal(latest.get(file)?.run.dir, newer);
    assert.equal(latest.get(file)?.at, 2_000_000);
  });

  it('says when in words', () => {
    const now = 10 * 86_400_000;
    assert.equal(formatAgo(now - 5_000, now), 'just now');
    assert.equal(formatAgo(now - 5 * 60_000, now), '5 min ago');
    assert.equal(formatAgo(now - 3 * 3_600_000, now), '3 h ago');
    assert.equal(formatAgo(now - 86_400_000, now), '1 day ago');
    assert.equal(formatAgo(0, 40 * 86_400_000), '1970-01-01');
  });
});

describe('Skills view: rows', () => {
  const base = {
    path: '/w/.claude/skills/pdf/SKILL.md',
    folder: '/w/.claude/skills/pdf',
    name: 'pdf',
    description: 'Fills PDF forms.',
    host: 'claude' as const,
    hasEvals: false,
    problems: [],
  };

  it('reads: name, which agent loads it, and "not trained yet"', () => {
    const row = skillRow(base, undefined, 0);
    assert.equal(row.label, 'pdf');
    assert.equal(row.description, 'Claude Code · not trained yet');
    assert.equal(row.accessibilityLabel, 'pdf, Claude Code · not trained yet');
    assert.match(
      row.tooltip,
      /Fills PDF forms\.\n\n\/w\/\.claude\/skills\/pdf\/SKILL\.md\nLoaded by Claude Code\n/,
    );
    assert.equal(row.contextValue, 'skillopt.skill');
    assert.equal(row.runId, undefined);
  });

  it("shows the latest run's best score and when, evals and problems", () => {
    const last = { run: run('/w/.skillopt/runs/r', {}, { bestScore: 0.625, baselineScore: 0.5 }), at: 0 };
    const warning = { severity: 'warning' as const, message: 'bad indentation', line: 2 };
    const row = skillRow({ ...base, hasEvals: true, problems: [warning] }, last, 3 * 3_600_000);
    assert.equal(row.description, 'best 0.625 · 3 h ago · Claude Code · has evals · 1 warning');
    assert.equal(row.icon.id, 'warning');
    assert.equal(row.contextValue, 'skillopt.skill.run');
    assert.equal(row.runId, '/w/.skillopt/runs/r');
    assert.match(row.tooltip, /Best selection score 0\.625, baseline 0\.500/);
    assert.match(row.tooltip, /Line 3 \(warning\): bad indentation/);
    const error = { severity: 'error' as const, message: 'no front matter', line: 0 };
    const worse = skillRow({ ...base, problems: [error, warning, warning] }, undefined, 0);
    assert.equal(worse.description, 'Claude Code · not trained yet · 1 error · 2 warnings');
    assert.equal(worse.icon.id, 'error');
  });

  it('says an interrupted run is interrupted', () => {
    const last = { run: run('/r', {}, { status: 'interrupted', bestScore: 0.4 }), at: 0 };
    assert.equal(
      skillRow(base, last, 60_000).description,
      'interrupted · best 0.400 · 1 min ago · Claude Code',
    );
  });

  it('sorts by name, then by agent', () => {
    const skills = [
      { ...base, name: 'b' },
      { ...base, name: 'a', host: 'codex' as const, path: '/2' },
      { ...base, name: 'a', host: 'copilot' as const, path: '/3' },
    ];
    assert.deepEqual(
      sortSkills(skills).map((s) => `${s.name}:${s.host}`),
      ['a:copilot', 'a:codex', 'b:claude'],
    );
  });
});

describe('Skills view: New Skill', () => {
  it('accepts only names the hosts load', () => {
    assert.equal(nameProblem('release-notes'), undefined);
    assert.match(nameProblem('Release') ?? '', /Lowercase/);
    assert.match(nameProblem('-x') ?? '', /Lowercase/);
    assert.match(nameProblem('a--b') ?? '', /Lowercase/);
    assert.match(nameProblem('a'.repeat(65)) ?? '', /At most 64/);
    assert.match(descriptionProblem(' ') ?? '', /what the skill does/);
    assert.match(descriptionProblem('x'.repeat(1025)) ?? '', /At most 1024/);
  });

  it('writes front matter the shared parser reads back, whatever the description holds', () => {
    const text = skillTemplate('release-notes', 'Use when: writing "release notes" # for a tag');
    const fm = parseFrontMatter(text);
    assert.equal(fm?.name, 'release-notes');
    assert.equal(fm?.description, 'Use when: writing "release notes" # for a tag');
    assert.deepEqual(fm?.errors, []);
    assert.match(fm?.body ?? '', /^\n# Release notes\n/);
  });
});
