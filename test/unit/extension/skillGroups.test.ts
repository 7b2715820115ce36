import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunView } from '../../../src/extension/runs/liveState';
import {
  runsBySkill,
  skillDisplayName,
  skillGroupId,
  skillGroupNodes,
} from '../../../src/extension/runs/skillGroups';

/** The Runs view grouped by skill: which runs share a group, its name, and its row. */
describe('Runs view: runs grouped by skill', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'skillopt-groups-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function skill(folder: string, front: string): string {
    mkdirSync(join(root, folder), { recursive: true });
    const file = join(root, folder, 'SKILL.md');
    writeFileSync(file, `---\n${front}---\n\n# Body\n`);
    return file;
  }
  function run(name: string, skillInit: string | undefined, extra: Partial<RunView> = {}): RunView {
    return {
      dir: join(root, 'runs', name),
      name,
      status: 'finished',
      writer: 'skillopt-vscode',
      config: skillInit ? { skill_init: skillInit } : {},
      history: [],
      epochs: [],
      ...extra,
    } as RunView;
  }
  const noOrigin = (): undefined => undefined;

  it('names a skill from its front matter, else its folder (SKILL.md) or its file', () => {
    assert.equal(skillDisplayName(skill('a-folder', 'name: house-style\ndescription: x\n')), 'house-style');
    assert.equal(skillDisplayName(skill('plain-folder', 'description: no name\n')), 'plain-folder');
    const single = join(root, 'notes.md');
    writeFileSync(single, '# Notes\n');
    assert.equal(skillDisplayName(single), 'notes');
    // A file that cannot be read keeps its folder's name.
    assert.equal(skillDisplayName(join(root, 'gone', 'SKILL.md')), 'gone');
  });

  it('groups only when the runs trained more than one skill', () => {
    const a = skill('a', 'name: alpha\ndescription: x\n');
    assert.equal(runsBySkill([run('r1', a), run('r2', a)], noOrigin), undefined);
    assert.equal(runsBySkill([], noOrigin), undefined);
  });

  it('puts each run under its skill (config.json, else the remembered origin), the lost ones last', () => {
    const a = skill('a', 'name: zulu\ndescription: x\n');
    const b = skill('b', 'name: alpha\ndescription: x\n');
    const runs = [
      run('2026-01-01_a', a),
      run('2026-02-01_a', a),
      run('from-origin', undefined),
      run('lost', join(root, 'moved', 'SKILL.md')),
    ];
    const groups = runsBySkill(runs, (dir) => (dir.endsWith('from-origin') ? b : undefined))!;
    assert.deepEqual(
      groups.map((g) => [g.name, g.runs.map((r) => r.name)]),
      [
        ['alpha', ['from-origin']],
        ['zulu', ['2026-02-01_a', '2026-01-01_a']],
        ['Skill not found', ['lost']],
      ],
    );
    const rows = skillGroupNodes(groups);
    assert.deepEqual(
      rows.map((r) => [r.id, r.label, r.description, r.contextValue, r.collapsible]),
      [
        [`skill:${b}`, 'alpha', '1 run', 'skillopt.skillGroup', 'expanded'],
        [`skill:${a}`, 'zulu', '2 runs', 'skillopt.skillGroup', 'expanded'],
        ['skill:', 'Skill not found', '1 run', 'skillopt.message', 'expanded'],
      ],
    );
    assert.equal(rows[1]!.skillPath, a);
    assert.equal(rows[1]!.path, undefined, 'no resourceUri: a skill row is not a file row');
    assert.match(rows[2]!.tooltip!, /not on this machine any more/);
    assert.equal(skillGroupId(groups[0]!), rows[0]!.id);
  });

  it('puts a skill with a training run first and counts its training runs', () => {
    const a = skill('a', 'name: alpha\ndescription: x\n');
    const b = skill('b', 'name: beta\ndescription: x\n');
    const live = { status: 'running' } as RunView['live'];
    const groups = runsBySkill([run('a1', a), run('b1', b, { status: 'running', live })], noOrigin)!;
    assert.deepEqual(
      skillGroupNodes(groups).map((r) => [r.label, r.description]),
      [
        ['beta', '1 run · 1 training'],
        ['alpha', '1 run'],
      ],
    );
  });

  it('tells two skills of one name apart by their folder', () => {
    const a = skill('team-a/house-style', 'name: house-style\ndescription: x\n');
    const b = skill('team-b/house-style', 'name: house-style\ndescription: x\n');
    const rows = skillGroupNodes(runsBySkill([run('a1', a), run('b1', b)], noOrigin)!);
    assert.deepEqual(
      rows.map((r) => r.description),
      [`1 run · ${join(root, 'team-a', 'house-style')}`, `1 run · ${join(root, 'team-b', 'house-style')}`],
    );
  });
});
