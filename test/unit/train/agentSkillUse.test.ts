import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RolloutResult } from '../../../src/protocol/records';
import { Accounting } from '../../../src/engine/llm/accounting';
import { RUN_DIR } from '../../../src/engine/store/layout';
import { runSkillUse, skillUseWarning } from '../../../src/engine/train/agentSkillUse';
import { buildReport } from '../../../src/engine/train/report';
import { renderReport } from '../../../src/engine/train/reportMarkdown';
import { tempDir } from './helpers';

/**
 * With native delivery the skill's description decides whether an agent target opens the skill at
 * all; the run says how often it did (report.md) and warns after the baseline when it seldom did.
 */
function row(id: string, loaded: boolean | undefined, errored = false): Partial<RolloutResult> {
  return {
    id,
    task_description: id,
    hard: 0,
    soft: 0,
    ...(errored ? { outcome: 'errored' as const } : {}),
    ...(loaded === undefined
      ? {}
      : {
          agent_run: {
            exit_code: errored ? 1 : 0,
            signal: null,
            timed_out: false,
            duration_ms: 10,
            stderr: '',
            skill_loaded: loaded,
          },
        }),
  };
}

function writeRows(dir: string, rows: Array<Partial<RolloutResult>>): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'results.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
}

function report(outDir: string): string {
  const built = buildReport({
    outDir,
    history: [],
    baselineSelection: 0,
    bestSelection: 0,
    finalSelection: null,
    tests: {},
    accounting: new Accounting().snapshot(),
    bestSkill: '# skill\n',
    provenance: [],
    humanDecisions: 0,
  });
  return renderReport(built, outDir, false);
}

describe('train/agentSkillUse: how often an agent target opened the skill', () => {
  let run: ReturnType<typeof tempDir>;
  beforeEach(() => (run = tempDir('skillopt-skill-use-')));
  afterEach(() => run.cleanup());

  it('counts the answered agent runs that had the skill, not the no-skill or errored ones', () => {
    writeRows(join(run.path, RUN_DIR.baselineSelection), [
      row('a', true),
      row('b', false),
      row('c', false, true),
    ]);
    writeRows(join(run.path, 'steps', 'step_0001', 'rollout'), [row('d', true)]);
    writeRows(join(run.path, RUN_DIR.noSkillSelection), [row('a', false), row('b', false)]);
    writeRows(join(run.path, RUN_DIR.testNoSkill), [row('e', false)]);
    assert.deepEqual(runSkillUse(run.path), { runs: 3, loaded: 2 });
    const md = report(run.path);
    assert.match(md, /^The agent opened the skill in 2 of 3 run\(s\) \(67%\)\.$/m);
    assert.doesNotMatch(md, /target_delivery/);
  });

  // A link planted in a run folder (skills/x → /etc): the walk followed it out of the folder, read
  // rows from there, and a dangling link inside threw ENOENT as a stack trace when report.md was built.
  it('does not follow a link out of the run folder, nor stop at a dangling one', () => {
    writeRows(join(run.path, RUN_DIR.baselineSelection), [row('a', true)]);
    const outside = tempDir('skillopt-outside-');
    try {
      writeRows(join(outside.path, 'rollout'), [row('x', false), row('y', false)]);
      symlinkSync(join(outside.path, 'missing'), join(outside.path, 'dangling'));
      mkdirSync(join(run.path, 'skills'));
      symlinkSync(outside.path, join(run.path, 'skills', 'x'));
      assert.deepEqual(runSkillUse(run.path), { runs: 1, loaded: 1 });
      assert.match(report(run.path), /^The agent opened the skill in 1 of 1 run\(s\)/m);
    } finally {
      outside.cleanup();
    }
  });

  it('says what to fix in report.md when the agent seldom opened it', () => {
    writeRows(join(run.path, RUN_DIR.baselineSelection), [row('a', false), row('b', false), row('c', true)]);
    const md = report(run.path);
    assert.match(
      md,
      /^The agent opened the skill in 1 of 3 run\(s\) \(33%\)\. An edit cannot change a run that never opens the skill, and the description decides whether the agent loads it: .*model\.target_delivery: pointer/m,
    );
  });

  it('says nothing for a target that does not report skill loading (a chat model, a custom command)', () => {
    writeRows(join(run.path, RUN_DIR.baselineSelection), [row('a', undefined), row('b', undefined)]);
    assert.equal(runSkillUse(run.path), undefined);
    assert.doesNotMatch(report(run.path), /opened the skill/);
    assert.equal(skillUseWarning('baseline selection', [row('a', undefined)] as RolloutResult[]), undefined);
  });

  it('warns for an evaluation under half, not at half or above', () => {
    const rows = (loaded: number, of: number) =>
      Array.from({ length: of }, (_, i) => row(`t${i}`, i < loaded)) as RolloutResult[];
    assert.match(
      skillUseWarning('baseline selection', rows(1, 4)) ?? '',
      /^baseline selection: the agent opened the skill in 1 of 4 run\(s\) \(25%\); an edit cannot change/,
    );
    assert.equal(skillUseWarning('baseline selection', rows(2, 4)), undefined);
    assert.equal(skillUseWarning('baseline selection', undefined), undefined);
  });
});
