import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { analystSystemPrompt } from '../../../src/engine/prompts/system';
import { appliesTo, LAPSE_HEADING, withSkillAware } from '../../../src/engine/prompts/skillAware';
import { extractAppendixNotes, hasAppendix } from '../../../src/engine/skill/document';
import { flushAppendix, stepNotes, type AppendixResult } from '../../../src/engine/train/step/appendix';
import type { RawPatch } from '../../../src/engine/train/reflect';
import type { RunContext } from '../../../src/engine/train/context';
import { defaultTrainSettings } from '../../../src/engine/train/settings';
import type { EngineEvent } from '../../../src/protocol/events';
import type { StepRecord } from '../../../src/protocol/records';
import { trainPrepared } from '../../../src/engine/run';
import { readRunFolder, stepArtifacts } from '../../../src/engine/store/runReader';
import { artifactNodes, stepNodes } from '../../../src/extension/runs/treeNodes';
import { comparableHistory, prepareSim, read, readJson, runSim, spend, tempDir } from './helpers';

const ON = ['optimizer.use_skill_aware_reflection=true', 'optimizer.skill_aware_consolidate_threshold=1'];

const skill = (notes: string[]): string =>
  `# S\n\n- rule\n\n<!-- APPENDIX_START -->\n## Execution Notes Appendix\n${notes.map((n) => `- ${n}\n`).join('')}<!-- APPENDIX_END -->\n`;

/** A run context whose optimizer must not be called (the threshold keeps consolidation off). */
function noCallContext(): RunContext {
  const fail = (): never => {
    throw new Error('no optimizer call expected');
  };
  return {
    settings: defaultTrainSettings,
    optimizer: { chat: fail } as unknown as RunContext['optimizer'],
    target: { chat: fail } as unknown as RunContext['target'],
    scorer: undefined as unknown as RunContext['scorer'],
    outDir: '/nonexistent',
    signal: new AbortController().signal,
    logger: { log: () => undefined } as unknown as RunContext['logger'],
    emit: () => undefined,
    recordFallback: () => undefined,
  };
}

describe('skill-aware reflection: the appendix stage', () => {
  it('asks the failure analyst always and the success analyst only when the source is both', () => {
    const on = { enabled: true, source: 'both' as const };
    const failureOnly = { enabled: true, source: 'failure_only' as const };
    const base = analystSystemPrompt('failure', 'patch');
    assert.ok(withSkillAware(base, 'failure', on).includes(LAPSE_HEADING));
    assert.ok(withSkillAware(base, 'failure', on).startsWith(base.trimEnd()));
    assert.ok(withSkillAware(analystSystemPrompt('success', 'patch'), 'success', on).includes(LAPSE_HEADING));
    assert.equal(appliesTo('success', failureOnly), false);
    assert.equal(withSkillAware(base, 'success', failureOnly), base);
    assert.equal(withSkillAware(base, 'failure', { enabled: false, source: 'both' }), base);
  });

  it("collects every analyst's notes in patch order", () => {
    const raw = [
      { source_type: 'failure', patch: {}, appendix_notes: ['a', 'b'] },
      { source_type: 'failure', patch: {} },
      { source_type: 'success', patch: {}, appendix_notes: ['c'] },
    ] as RawPatch[];
    assert.deepEqual(stepNotes(raw), ['a', 'b', 'c']);
  });

  it('merges notes into the appendix without duplicates and spends nothing under the threshold', async () => {
    const out = await flushAppendix(
      noCallContext(),
      skill(['Check the date format.']),
      ['check the date format;', '  Name the unit   ', 'Name the unit.'],
      3,
    );
    assert.deepEqual(out, {
      step_notes: ['check the date format;', '  Name the unit   ', 'Name the unit.'],
      appendix_after: ['Check the date format.', 'Name the unit'],
      n_added: 1,
    } satisfies AppendixResult);
    // Threshold 0 is off whatever the count.
    const off = await flushAppendix(noCallContext(), skill([]), ['x', 'y', 'z'], 0);
    assert.equal(off.appendix_after.length, 3);
    assert.equal(off.consolidated_from, undefined);
  });
});

describe('skill-aware reflection in the loop (sim, labelled simulated)', function () {
  this.timeout(180_000);
  let refDir: ReturnType<typeof tempDir>;
  let events: EngineEvent[];

  before(async () => {
    refDir = tempDir('skillopt-sa-ref-');
    const run = await runSim(prepareSim(refDir.path, ON));
    assert.equal(run.outcome.status, 'finished');
    events = run.events;
  });
  after(() => refDir.cleanup());

  it('flushes the notes after the gate, on a rejected step too, and the next candidate carries them', () => {
    const dir = refDir.path;
    const history = readJson<StepRecord[]>(dir, 'history.json');
    const flushed = history.filter((r) => r.n_execution_lapse_notes !== undefined);
    assert.ok(flushed.length >= 2, 'the sim run should produce execution lapses');
    const rejected = flushed.find((r) => r.action === 'reject');
    assert.ok(rejected, 'a rejected step with notes');
    for (const r of flushed) {
      const verdict = events.findIndex((e) => e.type === 'gate/verdict' && e.step === r.step);
      const appendix = events.findIndex((e) => e.type === 'appendix/updated' && e.step === r.step);
      assert.ok(verdict >= 0 && appendix > verdict, `step ${r.step}: appendix after the gate verdict`);
      const saved = readJson<AppendixResult>(
        dir,
        'steps',
        `step_${String(r.step).padStart(4, '0')}`,
        'appendix_notes.json',
      );
      const skillAfter = read(dir, 'skills', `skill_v${String(r.step).padStart(4, '0')}.md`);
      assert.deepEqual(extractAppendixNotes(skillAfter), saved.appendix_after);
      assert.equal(r.n_appendix_notes_total, saved.appendix_after.length);
    }
    // The notes bypass the gate: the rejected step's skill has them, and the next step's candidate
    // (what the next gate scores) is built on it.
    const next = `step_${String(rejected.step + 1).padStart(4, '0')}`;
    const afterReject = extractAppendixNotes(
      read(dir, 'skills', `skill_v${String(rejected.step).padStart(4, '0')}.md`),
    );
    assert.ok(afterReject.length > 0);
    if (existsSync(join(dir, 'steps', next, 'candidate_skill.md'))) {
      assert.deepEqual(extractAppendixNotes(read(dir, 'steps', next, 'candidate_skill.md')), afterReject);
    }
    // The threshold (1) made the consolidation call shorten the appendix at least once.
    assert.ok(flushed.some((r) => r.n_appendix_notes_consolidated !== undefined));
    // skill_v0000.md is the file as given; the run trains with an (empty) appendix from step 1.
    assert.equal(hasAppendix(read(dir, 'skills', 'skill_v0000.md')), false);
    assert.ok(hasAppendix(read(dir, 'skills', 'skill_v0001.md')));
  });

  it('shows the appendix in the Runs tree: per epoch beside the slow update, per step among its files', () => {
    const run = readRunFolder(refDir.path);
    const history = readJson<StepRecord[]>(refDir.path, 'history.json');
    for (const view of run.epochs) {
      const nodes = stepNodes(run, view.epoch);
      const notes = nodes.find((n) => n.label === 'Execution notes');
      const flushed = history.filter((r) => r.epoch === view.epoch && r.n_appendix_notes_total !== undefined);
      if (flushed.length === 0) {
        assert.equal(notes, undefined);
        continue;
      }
      assert.ok(notes, `epoch ${view.epoch}`);
      const last = flushed[flushed.length - 1];
      const added = flushed.reduce((n, r) => n + (r.n_appendix_notes_added ?? 0), 0);
      assert.match(
        notes.description ?? '',
        new RegExp(`^\\+${added} this epoch · ${last.n_appendix_notes_total} note`),
      );
      // Between the steps and the slow update, and it opens the skill the block lives in.
      const labels = nodes.map((n) => n.label);
      assert.ok(labels.indexOf('Execution notes') < labels.indexOf('Slow update'));
      assert.equal(
        notes.path,
        join(refDir.path, 'skills', `skill_v${String(last.step).padStart(4, '0')}.md`),
      );
      const saved = readJson<AppendixResult>(
        refDir.path,
        'steps',
        `step_${String(last.step).padStart(4, '0')}`,
        'appendix_notes.json',
      );
      for (const n of saved.appendix_after) assert.ok(notes.tooltip?.includes(`- ${n}`));
      const files = artifactNodes(run, last.step, stepArtifacts(refDir.path, last.step));
      assert.ok(files.some((f) => f.label === 'Execution notes' && f.path?.endsWith('appendix_notes.json')));
    }
  });

  it('keeps the appendix out of a run with the option off', async () => {
    const dir = tempDir('skillopt-sa-off-');
    try {
      await runSim(prepareSim(dir.path, ['train.num_epochs=1']));
      const history = readJson<StepRecord[]>(dir.path, 'history.json');
      assert.ok(history.every((r) => r.n_execution_lapse_notes === undefined));
      assert.equal(hasAppendix(read(dir.path, 'best_skill.md')), false);
    } finally {
      dir.cleanup();
    }
  });

  it('resumes after a stop as the appendix stage starts (its consolidation call in flight) without paying twice', async () => {
    const dir = tempDir('skillopt-sa-resume-');
    try {
      const starts = (e: EngineEvent): boolean => e.type === 'stage/started' && e.stage === 'appendix';
      const first = await runSim(prepareSim(dir.path, ON), starts);
      assert.equal(first.outcome.status, 'stopped', 'the stop point was never reached');
      const at = first.events.find(starts);
      const step = at?.type === 'stage/started' ? at.step : -1;
      assert.equal(lastCompleted(dir.path), step - 1, 'stopped inside the step');
      const second = await runSim(prepareSim(dir.path, ON));
      assert.equal(second.outcome.status, 'finished');
      assert.ok(second.events.some((e) => starts(e) && e.type === 'stage/started' && e.step === step));
      sameAsUninterrupted(dir.path);
    } finally {
      dir.cleanup();
    }
  });

  it('resumes after a crash between appendix_notes.json and the step commit, reusing the file', async () => {
    const dir = tempDir('skillopt-sa-crash-');
    try {
      let step = -1;
      // A process dying right after the artifact is saved: the step is not committed.
      await assert.rejects(
        trainPrepared(prepareSim(dir.path, ON), {
          emit: (e) => {
            if (e.type !== 'appendix/updated') return;
            step = e.step;
            throw new Error('crash');
          },
          signal: new AbortController().signal,
          resumeCommand: 'resume',
        }),
        /crash/,
      );
      assert.equal(lastCompleted(dir.path), step - 1);
      const second = await runSim(prepareSim(dir.path, ON));
      assert.equal(second.outcome.status, 'finished');
      // The saved notes are reused: the stage does not run (nor pay) again for that step.
      assert.ok(
        !second.events.some((e) => e.type === 'stage/started' && e.stage === 'appendix' && e.step === step),
      );
      sameAsUninterrupted(dir.path);
    } finally {
      dir.cleanup();
    }
  });

  const lastCompleted = (dir: string): number =>
    readJson<{ last_completed_step: number }>(dir, 'runtime_state.json').last_completed_step;

  function sameAsUninterrupted(dir: string): void {
    assert.deepEqual(comparableHistory(dir), comparableHistory(refDir.path));
    assert.equal(read(dir, 'best_skill.md'), read(refDir.path, 'best_skill.md'));
    // Money is exact: both processes together paid what one uninterrupted run pays.
    assert.deepEqual(spend(dir), spend(refDir.path));
  }
});
