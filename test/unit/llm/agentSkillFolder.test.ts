import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copySkillFolder } from '../../../src/engine/llm/agents/isolation';
import { CommandBackend } from '../../../src/engine/llm/command';

/** The skill goes to the agent as a folder; the real CLIs read from it in test/unit/agents/realClis.test.ts. */
describe('llm/agents: the skill folder', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'skillopt-skillfolder-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const backend = (skillFolder: string): CommandBackend =>
    new CommandBackend({ agent: 'claude', trusted: true, skillFolder, workspaceRoot: join(root, 'agents') });

  it('copies references/, scripts/ and assets/ only: never the task data, config or runs beside the skill', () => {
    const from = join(root, 'skill');
    for (const d of ['references', 'scripts/lib', 'assets', '.skillopt/runs/r1'])
      mkdirSync(join(from, d), { recursive: true });
    for (const f of [
      'references/a.md',
      'scripts/lib/x.sh',
      'assets/t.txt',
      'tasks.jsonl',
      'skillopt.yaml',
      'SKILL.md',
    ])
      writeFileSync(join(from, f), f);
    const to = join(root, 'work', '.claude', 'skills', 'x');
    copySkillFolder(from, to);
    assert.deepEqual(readdirSync(to).sort(), ['assets', 'references', 'scripts']);
    assert.deepEqual(readdirSync(join(to, 'scripts', 'lib')), ['x.sh']);
  });

  it('keys cached answers on the resource files, so a changed reference is asked again', () => {
    const from = join(root, 'skill');
    mkdirSync(from);
    writeFileSync(join(from, 'tasks.jsonl'), '{}');
    assert.equal(backend(from).cacheParams.resources, undefined);
    mkdirSync(join(from, 'references'));
    writeFileSync(join(from, 'references', 'rules.md'), 'RULE-1');
    const first = backend(from).cacheParams.resources;
    assert.match(String(first), /^[0-9a-f]{16}$/);
    assert.equal(backend(from).cacheParams.resources, first);
    writeFileSync(join(from, 'references', 'rules.md'), 'RULE-2');
    assert.notEqual(backend(from).cacheParams.resources, first);
  });
});
